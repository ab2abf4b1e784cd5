"""The keys every calibration report (``cat calibrate --report``) begins with: the CLI
contract's (DESIGN.md) and the data's size, shared by the 0/1 and the graded fits."""

from __future__ import annotations

from cat.results import ResultModel


class FitReportHead(ResultModel):
    """model, method, n_subjects, n_items, loglik (marginal), n_iter, converged and
    seconds (the contract's), with the responses' count and missing share and the log
    posterior (the log-likelihood plus the log prior)."""

    model: str
    method: str
    n_subjects: int
    n_items: int
    n_responses: int
    missing_share: float
    loglik: float
    logpost: float
    n_iter: int
    converged: bool
    seconds: float
