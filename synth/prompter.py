"""The messages and request of every call, under a run's generation settings.

``Prompter`` puts ``synth.prompts`` (the built-in prompts), a user's prompt template
(``synth.templates``), a system prompt and few-shot examples (``synth.few_shot``)
together. With the default ``GenerationSettings`` its messages are exactly those of
``synth.prompts``, so the calls of a run without settings keep their store keys.

The template and the examples shape the first (or only) answer; the debate and
reflection of a pair keep their own prompts. Examples are solved pool items
(``synth.few_shot.FewShot``) or a protocol's worked examples (``WorkedShots``), shown as
turns, or inside the one user message by a template that uses its ``examples`` field.
The system prompt, the sampling settings, the stop sequences and the extra body apply to
every call of the answering models.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from itempool import ItemType, PoolItem, WorkedExample
from synth import prompts
from synth.backend import ChatRequest
from synth.few_shot import FewShot, WorkedShots
from synth.generation import GenerationSettings
from synth.names import Style
from synth.prompts import Message
from synth.templates import render, renders_examples

__all__ = ["Prompter"]


@dataclass(frozen=True)
class Prompter:
    """Messages and requests for the items of a pool in ``language``."""

    settings: GenerationSettings
    language: str
    examples: FewShot | WorkedShots | None = None
    # Pool items that are also worked examples (by id): never asked.
    worked_ids: tuple[str, ...] = ()

    @classmethod
    def for_pool(
        cls, settings: GenerationSettings, items: Sequence[PoolItem], language: str, seed: int
    ) -> Prompter:
        """The prompter of a run on ``items`` (the whole pool: examples come from it,
        unless the settings hold worked examples), its examples drawn with ``seed``."""
        if not settings.few_shot:
            return cls(settings, language)
        if settings.examples is not None:
            shots = WorkedShots.choose(
                settings.examples, settings.few_shot, settings.few_shot_select, seed
            )
            return cls(settings, language, shots, shots.shown(items))
        return cls(settings, language, FewShot.draw(items, settings.few_shot, seed))

    def check(self, items: Iterable[PoolItem], styles: Iterable[Style] = (Style.DIRECT,)) -> None:
        """Render the first answer of one item of each shape of ``items`` (``_shape``):
        a template's error (an unknown field) or an item without worked examples is
        raised here, before any call, naming the item."""
        styles = tuple(styles)
        items = tuple(items)
        if isinstance(self.examples, WorkedShots):
            self.examples.check(items)
        if self.settings.prompt_template is None:
            return
        # One item of each shape: a template reads an item only through its fields, so
        # items alike in every field it could branch on render alike (rendering all of
        # MMLU-Pro's 12,032 items took 5.5 s before a run's first call).
        shapes: dict[tuple[object, ...], PoolItem] = {}
        for item in items:
            shapes.setdefault(_shape(item), item)
        for item in shapes.values():
            for style in styles:
                self.first(item, style)

    def shown(self) -> tuple[str, ...]:
        """The items shown as examples (``FewShot.shown``): none without few-shot."""
        if isinstance(self.examples, FewShot):
            return self.examples.shown()
        return self.worked_ids

    def _user(
        self, item: PoolItem, style: Style, examples: list[dict[str, Any]] | None = None
    ) -> str:
        template = self.settings.prompt_template
        if template is None:
            return prompts.user_prompt(item, self.language, style)
        source = self.settings.prompt_template_path
        return render(template, item, self.language, style, source, examples)

    def _shots(self, item: PoolItem) -> list[tuple[PoolItem, str]]:
        """Each example shown before ``item``: as an item, and its solved answer."""
        if isinstance(self.examples, FewShot):
            return [
                (e, prompts.example_answer(e, self.language))
                for e in self.examples.examples_for(item)
            ]
        if isinstance(self.examples, WorkedShots):
            return [(_as_item(e), e.worked) for e in self.examples.examples_for(item)]
        return []

    def _system(self) -> tuple[Message, ...]:
        text = self.settings.system_prompt
        if text is None:
            return (("system", prompts.system_message(self.language)),)
        return (("system", text),) if text else ()

    def _with_system(self, messages: tuple[Message, ...]) -> tuple[Message, ...]:
        """``messages`` (a built-in prompt) with this run's system message instead of its."""
        rest = messages[1:] if messages and messages[0][0] == "system" else messages
        return (*self._system(), *rest)

    def first(self, item: PoolItem, style: Style) -> tuple[Message, ...]:
        """The first (or only) answer to ``item``: the system message, each example as a
        user turn and its solved answer, then the question."""
        turns: list[Message] = list(self._system())
        shots = self._shots(item)
        template = self.settings.prompt_template
        if template is not None and renders_examples(template):
            fields = [_example_fields(example, answer) for example, answer in shots]
            turns.append(("user", self._user(item, style, fields)))
            return tuple(turns)
        for example, answer in shots:
            turns.append(("user", self._user(example, style)))
            turns.append(("assistant", answer))
        turns.append(("user", self._user(item, style)))
        return tuple(turns)

    def debate(self, item: PoolItem, style: Style, first: str) -> tuple[Message, ...]:
        """A pair's review of the first answer (its built-in prompt)."""
        return self._with_system(prompts.debate(item, self.language, style, first))

    def reflection(
        self, item: PoolItem, style: Style, first: str, review: str
    ) -> tuple[Message, ...]:
        """A pair's final answer (its built-in prompt)."""
        return self._with_system(prompts.reflection(item, self.language, style, first, review))

    def request(
        self,
        model: str,
        messages: tuple[Message, ...],
        seed: int | None,
        *,
        item_id: str | None = None,
        stage: str | None = None,
    ) -> ChatRequest:
        """The request of ``messages`` to ``model`` with the run's sampling settings."""
        s = self.settings
        return ChatRequest(
            model,
            messages,
            s.temperature,
            seed,
            s.max_tokens,
            stop=s.stop,
            extra_body=s.extra_body,
            endpoint=s.endpoint,
            item_id=item_id,
            stage=stage,
        )


def _as_item(example: WorkedExample) -> PoolItem:
    """A worked example as the item its user turn renders."""
    if example.options:
        return PoolItem(
            id=example.id,
            scenario=example.scenario,
            type=ItemType.SINGLE,
            question=example.question,
            options=example.options,
            answer=example.answer or next(iter(example.options)),
        )
    return PoolItem(
        id=example.id,
        scenario=example.scenario,
        type=ItemType.OPEN,
        question=example.question,
        references=(example.worked,),
    )


def _example_fields(example: PoolItem, answer: str) -> dict[str, Any]:
    """What a template's ``examples`` holds of one example."""
    return {
        "id": example.id,
        "scenario": example.scenario,
        "question": example.question,
        "options": dict(example.options),
        "choices": list(example.options.items()),
        "answer": example.answer,
        "worked": answer,
    }


def _shape(item: PoolItem) -> tuple[object, ...]:
    """What a template's branches may tell apart in ``item``: its type, scenario, the
    option letters, the meta keys and which text fields are empty. Items of one shape
    render alike (the first of each is rendered by ``Prompter.check``)."""
    return (
        item.type,
        item.scenario,
        tuple(item.options),
        tuple(sorted(item.meta)),
        not item.question,
        tuple(not text for text in item.options.values()),
    )
