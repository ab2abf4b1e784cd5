"""The estimation engine every calibrator of ``irt`` shares: one EM loop with one
SQUAREM acceleration (``irt.estimation.em_loop``) and the ``Calibrator`` base that fixes
the attributes every fit reports (``irt.estimation.calibrator``).

A model family contributes only its EM cycle — an E-step at the current parameters and
an M-step from its expected counts — and the map between its parameters and one flat
vector; the loop, the acceleration, the stopping rule and the record of the fit are
written once here.
"""
