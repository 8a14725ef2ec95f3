"""Version and toolchain mismatches: two installed components that do not fit together."""

from __future__ import annotations

from mltriage.causes.conditions.registry import Judged, condition
from mltriage.model import Finding
from mltriage.run_model.model import RunModel, package_key
from mltriage.symptoms.observe import Observations
from mltriage.symptoms.vocabulary import Symptom

@condition("requirement-raised", "a library raised because an installed version fails its stated requirement (transformers' require_version)")
def _requirement_raised(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    obs = next((o for o in observations.of(Symptom.REQUIREMENT_UNMET) if o.facts.get("form") == "raised"), None)
    return Judged(obs is not None, [f"{obs.facts.get('package')} {obs.facts.get('version')} fails the requirement "
                                     f"{obs.facts.get('requirement')} (line {obs.line})"] if obs else [])


@condition("waiting-on-build-lock", "a process waits in torch.utils.file_baton FileBaton.wait (a frame, a py-spy line, its warning)")
def _waiting_on_build_lock(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    obs = observations.first(Symptom.JIT_BUILD_WAITING)
    return Judged(obs is not None, [f"a process waits in torch's FileBaton.wait for the build lock (line {obs.line})"] if obs else [])


@condition("stopped-in-jit-build", "the run stopped (hang, Ctrl-C, or the log ends) right after a JIT extension build began")
def _stopped_in_jit_build(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    fact = run.stopped_in_jit_build
    return Judged(fact is not None, [fact.cited()] if fact else [], (fact.text,) if fact else ())


@condition("deepspeed-config-model", "the config model pydantic rejected is one of DeepSpeed's (DeepSpeedZeroConfig, DeepSpeedConfigModel ...)")
def _deepspeed_config_model(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    obs = next((o for o in observations.of(Symptom.CONFIG_VALIDATION_FAILED) if str(o.facts.get("model", "")).startswith("DeepSpeed")), None)
    return Judged(obs is not None, [f"pydantic rejected DeepSpeed's {obs.facts['model']} (line {obs.line})"] if obs else [])


@condition("import-from-installed-package", "a failed import names an installed package (dotted module, site-packages path, another package's frame)")
def _import_from_installed_package(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """A failed import that names an installed package: two installed packages (or the code and a
    package) are at versions that do not fit. CPython only says ``No module named 'a.b'`` once ``a``
    imported, so a dotted name always counts; a missing name or module attribute counts when another
    installed package's frame made the import (for the code's own imports python-import-name-mismatch
    speaks). A top-level ``No module named 'a'`` (not installed) and a circular import never hold."""
    for obs in observations.of(Symptom.IMPORT_FAILED):
        facts = obs.facts
        form, module = facts.get("form"), str(facts.get("module") or "")
        package, importer = str(facts.get("package") or ""), str(facts.get("importer") or "")
        foreign = bool(importer) and package_key(importer) != package_key(package)
        if form == "module":
            held, why = "." in module, f"{module} is not in the installed {package}, although {package} itself imported"
        elif form == "name":  # (without another package's frame, python-import-name-mismatch says it)
            held, why = foreign, f"the installed {package or 'package'} has no {facts.get('missing', 'such name')}"
        else:
            held, why = foreign, f"the installed {package} has no {facts.get('missing', 'such attribute')}"
        if not held:
            continue
        notes = [f"{why} (line {obs.line})"]
        if importer:
            notes.append(f"the import was made by the installed {importer} (its frame is the innermost one above the error)")
        lines = []
        for name in dict.fromkeys(n for n in (package, importer) if n):
            fact = run.packages.get(package_key(name))
            if fact is not None:
                notes.append(f"the log shows {fact.cited()}")
                lines.append(fact.text)
        pair = {package_key(n) for n in (package, importer) if n}
        for conflict in observations.of(Symptom.REQUIREMENT_UNMET):
            if conflict.facts.get("form") == "pip" and package_key(str(conflict.facts.get("package", ""))) in pair:
                notes.append(f"pip reported: {conflict.facts.get('requirer')} {conflict.facts.get('requirer_version')} requires "
                             f"{conflict.facts.get('requirement')}, but {conflict.facts.get('package')} {conflict.facts.get('version')} "
                             f"is installed (line {conflict.line})")
                lines.append(conflict.text)
        return Judged(True, notes, tuple(lines))
    return Judged(False, [])


@condition("transformers-older-than-model", "transformers did not know a model type (notes the version the log lists against the form it raised)")
def _transformers_older_than_model(run: RunModel, findings: list[Finding], observations: Observations) -> Judged:
    """transformers did not know the model type: the release that ran is older than the model. Its
    KeyError form comes only from releases before 4.37, so a newer version in the log's package list
    means the job ran another environment than the one listed."""
    obs = observations.first(Symptom.MODEL_TYPE_UNKNOWN)
    if obs is None:
        return Judged(False, [])
    notes, lines = [], []
    listed = run.packages.get("transformers")
    before = str(obs.facts.get("transformers_before") or "")
    if before:
        notes.append(f"the KeyError from CONFIG_MAPPING (line {obs.line}) is the form of transformers releases before {before}")
    if listed is not None:
        version = listed.words.split(" ", 1)[-1]
        if before and _release(version) >= _release(before):
            notes.append(f"the log lists {listed.cited()}, yet the traceback comes from a release before {before}: the job ran "
                         "another environment than the one listed (print transformers.__version__ and __file__ inside the job)")
        else:
            notes.append(f"the log shows {listed.cited()}")
        lines.append(listed.text)
    return Judged(True, notes, tuple(lines))


def _release(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit()) if piece[:1].isdigit() else ""
        if not digits:
            break
        parts.append(int(digits[:6]))
    return tuple(parts)
