"""Stage 2a of the engine: lines become typed observations.

A *symptom* is a named thing a run can show (``peer-access-unsupported``, ``comm-init-started``,
``wrong-values``...), recognised by every wording it has had across releases and projects
(``vocabulary``). ``observe`` turns the pre-filter's landings into ``Observation`` values with typed
facts, parsed once, at capture. Nothing here decides what broke: the run model and the causes read
these observations."""

from mltriage.symptoms.vocabulary import Symptom, Transport, Wording, WORDINGS, SYMPTOM_LITERALS
from mltriage.symptoms.observe import Observation, Observations

__all__ = ["Symptom", "Transport", "Wording", "WORDINGS", "SYMPTOM_LITERALS", "Observation", "Observations"]
