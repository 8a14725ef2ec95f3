"""Secret masking (issue 13, items 3-5): every fake secret form, in every carrier, on every CLI output.

The language server's outputs are checked over real stdio in tests/lsp/test_masking.py.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

import procs
from cli_runner import run_cli
from masking_corpus import (
    CARRIERS,
    FORMS,
    P2P_TEST_FAILED,
    RECORD_ERRORS,
    command_echo_log,
    env_dump_log,
    error_json_messages,
    leaks,
    marker,
)
from mltriage.engine import diagnose_path, diagnose_text
from mltriage.masking import (
    MASK,
    Cost,
    regex_cost,
    RULES_DIR,
    WITHHELD,
    clip,
    load_rules,
    mask_diagnosis,
    mask_secrets,
    rule_set,
    stale_adaptations,
)
from mltriage.model import Diagnosis, Finding, Fix, FlightRecorderSummary, WorkerFailure
from mltriage.render import render_sarif, render_text

ROOT = Path(__file__).resolve().parent.parent
ENV_GROUP = 7  # the stall note quotes 8 ranks' last lines: 7 forms and the rank whose bar is at 0%


def _outputs(text: str) -> dict[str, str]:
    d = diagnose_text(text, source="/logs/run.log")
    return {"json": json.dumps(d.to_json()), "human": render_text(d), "sarif": json.dumps(render_sarif(d))}


# -- the rule set ----------------------------------------------------------------------------------


def test_rule_files_cite_their_source_and_every_rule_compiles():
    header = (RULES_DIR / "gitleaks.toml").read_text()[:3000]
    for needed in ("https://github.com/gitleaks/gitleaks", "v8.30.1", "MIT", "config/gitleaks.toml"):
        assert needed in header
    rules = load_rules()
    assert len(rules.rules) > 200  # gitleaks' rules (less the file-name ones) and ours
    for rule in rules.rules:
        assert rule.pattern.pattern  # compiles with the `regex` module
    for data in (tomllib.loads((RULES_DIR / name).read_text()) for name in ("gitleaks.toml", "mltriage.toml")):
        assert all(r.get("keywords") or r.get("gate") or r.get("path") or not r.get("regex") for r in data["rules"]), \
            "a rule without keywords needs a gate, or it runs on every text"


def test_no_adaptation_is_stale():
    assert stale_adaptations() == []


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.name)
def test_every_form_is_masked_alone(form):
    masked = mask_secrets(f"[rank3]: {form.text} (attempt 2)")
    assert MASK in masked
    assert leaks(masked, [form]) == [], masked


def test_multi_line_pem_block_is_masked_in_evidence():
    body = [f.text for f in FORMS if f.name == "pem-private-key"][0]
    lines = body.strip('"').replace("\\n", "\n").splitlines()
    finding = Finding(signature="x", title="t", category="program", severity="error", proposed_role="root-cause", rank=0, host=None,
                      source="a.log", lines=(1, len(lines)), line=1, column_start=0, column_end=1, evidence=lines, facts={},
                      root_cause="r", fix=Fix(), verify="v", confidence=1.0)
    d = Diagnosis(findings=[finding], sources=["a.log"])
    mask_diagnosis(d)
    assert leaks("\n".join(d.findings[0].evidence), [f for f in FORMS if f.name == "pem-private-key"]) == []
    assert len(d.findings[0].evidence) == len(lines)  # still one entry per line


@pytest.mark.parametrize(
    "text",
    [
        "TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1 NCCL_SOCKET_IFNAME=eth0 MASTER_PORT=29500",
        "KeyError: 'model.layers.0.self_attn.q_proj.weight'",
        "max_tokens=512 tokenizer=meta-llama/Llama-3-8B --max-new-tokens 64",
        '  File "/home/Alice/Projects/LLaMA2024/train.py", line 10, in <module>',
        "commit 0123456789abcdef0123456789abcdef01234567",
        "Basic configuration loaded from /etc/app.yaml",
    ],
)
def test_what_is_not_a_secret_stays(text):
    assert mask_secrets(text) == text


def test_healthy_recorded_logs_are_left_alone():
    """Real recorded logs of healthy runs hold no secret: the masker changes (almost) none of their lines."""
    lines = [line for path in sorted((ROOT / "corpus" / "healthy").rglob("*.log")) for line in path.read_text(errors="replace").splitlines()]
    assert len(lines) > 1000
    changed = [line for line in lines if mask_secrets(line) != line]
    assert len(changed) <= len(lines) // 500, changed[:5]


@pytest.mark.parametrize(
    "text",
    [
        "tokenizer.pad_token = tokenizer.eos_token",  # a tokenizer's special tokens, not credentials
        "Give the tokenizer a pad token: reuse EOS",
        "{'pad_token': '[PAD]', 'eos_token': '</s>', 'bos_token': '<s>'}",
        "input_token_len: 4096 max_tokens=512 token_type: bearer",
        "password_file=/run/secrets/db secret_name=hf-token token_url=https://auth.internal/token",
        "export HF_TOKEN=<your token>  # placeholders and references are no secrets",
        "HF_TOKEN=$HF_TOKEN vllm serve --hf-token ${HF_TOKEN}",
        "DDP saw a parameter ready twice in one backward pass: almost always reentrant checkpointing",
        "https://user@host:8080/path and git@github.com:org/repo.git",
        "password: [REDACTED]  token=*** api_key=None",
    ],
)
def test_ml_words_placeholders_and_references_stay(text):
    assert mask_secrets(text) == text


def test_no_signature_s_own_words_look_like_a_secret():
    """The rules run on every text of a diagnosis, the sentences filled in from signatures too (they
    quote the log's command): what a signature itself says must come through whole."""
    from mltriage.engine.findings import render_rule_text
    from mltriage.library import load_library
    from mltriage.model import export_line

    library = load_library()
    changed = []
    for rule in map(library.get, library.rules):
        title, summary, fix, verify = render_rule_text(rule, {})
        texts = [rule.title, rule.summary, rule.mechanism_gist, title, summary, fix.summary, verify, *fix.steps, *fix.commands,
                 *(export_line(k, v) for k, v in rule.fix_env.items()), *(f"{f.argument} {f.why}" for f in fix.flags)]
        changed += [(rule.id, t) for t in texts if mask_secrets(t) != t]
    assert len(library.rules) > 150
    assert changed == []


# Text that looks like a secret at every few characters and is exempt as one (a value gitleaks'
# allowlists let through, a placeholder, a tokenizer name): the masker examines every match.
NEAR_SECRETS = ["secret=true123456789 ", "api_key=abcdefghijkl1234 ", "token: 1234567890abcdefXYZ\n",
                "password=${DB_PASSWORD} ", "TOKEN", "token=", "--password ", "://a:b@"]


@pytest.mark.parametrize("unit", NEAR_SECRETS)
def test_masking_work_grows_linearly_with_the_text(unit):
    """The characters the masker's searches read, counted (not timed): 4 times the text, at most 4.4
    times the work, and a bounded number of reads per character. Before, each match rescanned its
    line from the start (the left context) and re-read the whole line (line allowlists): 64 KB
    of such text took 10 s."""
    rules = rule_set()
    work = []
    for n in (2_000, 8_000):
        text = unit * (n // len(unit))
        mask_secrets(text[:200])  # rules compiled before counting
        before = rules.work
        masked = mask_secrets(text)
        work.append(rules.work - before)
        assert masked != WITHHELD
        assert work[-1] <= 120 * len(text), (unit, work[-1] / len(text))
    assert work[1] <= 4.4 * work[0], (unit, work)


def test_masking_is_idempotent():
    once = mask_secrets("\n".join(f.text for f in FORMS))
    assert mask_secrets(once) == once


def test_clip_never_cuts_a_secret_in_half():
    for form in FORMS:
        secret = form.secrets[0]
        text = "x" * 100 + " " + form.text
        at = text.find(secret) + len(secret) // 2  # the limit falls inside the secret
        cut = clip(text, at)
        assert len(cut) <= at
        assert leaks(mask_secrets(cut), [form]) == [], (form.name, cut[-60:])  # text[:at] would leak half of it


def test_name_value_masking_is_linear_on_a_65_kb_line():
    # each took 9-12 s with the stdlib pattern it replaces (quadratic backtracking); counted, not timed
    rules = rule_set()
    for line in ("TOKEN" * 13_107, "SECRET_" * 9_362, "token=" * 10_922, "password: " * 6_553, "--password " * 5_957):
        before = rules.work
        masked = mask_secrets(line)
        assert rules.work - before <= 120 * len(line), line[:20]
        assert masked != WITHHELD and len(masked) <= len(line), line[:20]


def test_every_regex_the_masker_runs_has_a_bounded_cost_by_its_shape():
    """No search is timed: each regex is judged by its shape, so what is masked is the same on any machine."""
    rules = load_rules()
    assert {r.id: regex_cost(r.source) for r in rules.rules if regex_cost(r.source) is not Cost.LINEAR} == {}
    lists = [*rules.allowlists, *(a for r in rules.rules for a in r.allowlists)]
    assert all(a.cost is not Cost.UNBOUNDED for a in lists)


def test_a_rule_that_cannot_run_in_bounded_time_withholds_the_text_whatever_the_machine():
    from mltriage.masking import RuleSet, SecretRule

    nested = SecretRule(id="nested", source=r"(?:a+)+b", keywords=("aa",))  # an exponential shape
    assert regex_cost(nested.source) is Cost.UNBOUNDED
    rules = RuleSet([nested], ())
    assert rules.scan("x = aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!") is None  # withheld, without running the search
    assert rules.scan("nothing to see here") == []  # its keyword absent: not a candidate


def test_the_curl_rules_read_continuation_lines_as_gitleaks_does():
    header = 'curl https://api.example.com/v1 \\\n  -H "Authorization: Bearer 9f8e7d6c5b4a39281706"\n'
    user = "curl https://example.com/upload \\\n  --user admin:Zq7wPl3xKs91\n"
    assert "9f8e7d6c5b4a39281706" not in mask_secrets(header)
    assert "Zq7wPl3xKs91" not in mask_secrets(user)


def test_every_log_derived_field_of_a_diagnosis_is_masked():
    """The one exit point: whatever a later stage puts in a diagnosis, mask_diagnosis reaches it."""
    from mltriage.model import RankRole

    texts = [f"{marker(n)} {f.text}" for n, f in enumerate(FORMS)]
    finding = Finding(signature="x", title="t", category="program", severity="error", proposed_role="root-cause", rank=0, host=None,
                      source="a.log", lines=(1, 1), line=1, column_start=0, column_end=1, evidence=texts[:5],
                      facts={f"f{n}": t for n, t in enumerate(texts)}, root_cause="r", fix=Fix(), verify="v",
                      confidence=1.0, notes=texts[5:10])
    d = Diagnosis(findings=[finding], sources=["a.log"], explanation=" ".join(texts[10:12]),
                  ranks=[RankRole(rank=n, role="collateral", why=t) for n, t in enumerate(texts[12:15])],
                  warnings=texts[15:17], launcher=[WorkerFailure(section="failures", line=1, rank=1, traceback=texts[17], host=texts[18], error_file=texts[21])],
                  flight_recorder=[FlightRecorderSummary(rank=0, source=texts[20], last_scheduled=3, last_started=3, last_completed=2,
                                                         stuck_op=texts[19])],
                  topology={"sources": ["topo.txt"], "facts": texts[22:25]}, skipped=[{"name": "b", "reason": texts[25]}])
    mask_diagnosis(d)
    dumped = json.dumps(d.to_json())
    assert all(marker(n) in dumped for n in range(26))
    assert leaks(dumped, FORMS[:26]) == []


def test_a_secret_found_once_is_masked_where_its_context_is_gone():
    """A fact holds only the value (the pattern captured it without its name); the rendered title and
    the fact itself are still masked, because the evidence line showed what it was."""
    finding = Finding(signature="x", title="login as Zq8vR2mK7pLx4wNs failed", category="program", severity="error",
                      proposed_role="root-cause", rank=0, host=None, source="a.log", lines=(1, 1), line=1, column_start=0,
                      column_end=1, evidence=["train.py --password Zq8vR2mK7pLx4wNs"], facts={"value": "Zq8vR2mK7pLx4wNs",
                      "cut": "Zq8vR2mK7pL"}, root_cause="r", fix=Fix(), verify="v", confidence=1.0)
    d = Diagnosis(findings=[finding], sources=["a.log"])
    mask_diagnosis(d)
    assert "Zq8vR2mK" not in json.dumps(d.to_json())
    assert d.findings[0].title == f"login as {MASK} failed"


# -- every carrier, every form, every CLI output ----------------------------------------------------

# (carrier, output) pairs whose output does not carry that part of a log: text and SARIF show no
# torchrun summary entries and cut evidence at 300 characters, so the marker cannot show there
_NOT_SHOWN = {("torchrun-summary", "human"), ("torchrun-summary", "sarif"), ("2048-char-line", "human"),
              ("2048-char-line", "sarif"), ("torchrun-error-file-path", "human"), ("torchrun-error-file-path", "sarif"),
              ("chained-traceback", "sarif")}  # SARIF's message is the last exception's, not its cause's


@pytest.mark.parametrize("carrier", list(CARRIERS))
def test_each_form_in_each_carrier_is_masked_in_text_json_and_sarif(carrier):
    """One log per form (a diagnosis shows the root cause whole), rendered as the CLI renders it."""
    make = CARRIERS[carrier]
    for form in FORMS:
        for output, text in _outputs(make([form])).items():
            assert leaks(text, [form]) == [], (carrier, form.name, output)
            if (carrier, output) not in _NOT_SHOWN:
                assert marker(0) in text, (carrier, form.name, output, "the carrier line never reached the output")


def test_command_echo_is_masked_where_the_fix_quotes_the_command():
    for form in FORMS:
        for output, text in _outputs(command_echo_log(form)).items():
            assert marker(0) in text, (form.name, output)
            assert leaks(text, [form]) == [], (form.name, output)


def test_a_launch_command_s_token_is_masked_in_the_relaunch_command():
    """Issue 22: `HF_TOKEN=hf_... vllm serve ...` came back whole in the suggested relaunch command."""
    token = next(f for f in FORMS if f.name == "hf-token-assignment").secrets[0]
    log = f"user@node-0:~$ HF_TOKEN={token} vllm serve meta-llama/Llama-3.1-8B --tensor-parallel-size 2\n{P2P_TEST_FAILED}\n"
    d = diagnose_text(log, source="/logs/serve.log")
    relaunch = d.root_cause.fix.relaunch
    assert relaunch == f"HF_TOKEN={MASK} vllm serve meta-llama/Llama-3.1-8B --tensor-parallel-size 2 --disable-custom-all-reduce"
    for output, text in _outputs(log).items():
        assert "--disable-custom-all-reduce" in text and token[:12] not in text, output


def test_a_secret_in_a_signature_s_sentence_is_masked_by_its_context():
    """The engine fills the log's command into fix steps, verify and relaunch: each is searched
    with the rules, not only cleared of secrets found elsewhere (a secret the evidence does not show)."""
    finding = Finding(signature="x", title="t", category="program", severity="error", proposed_role="root-cause", rank=0, host=None,
                      source="a.log", lines=(1, 1), line=1, column_start=0, column_end=1, evidence=["boom"], facts={},
                      root_cause="r", fix=Fix(steps=["rerun `mysql -u root -pZq8vR2mK7pLx4wNs runs`"],
                                              relaunch="sshpass -p Zq8vR2mK7pLx4wNt ssh n1 torchrun train.py"),
                      verify="DB_PASSWORD=Zq8vR2mK7pLx4wNu python train.py", confidence=1.0)
    d = Diagnosis(findings=[finding], sources=["a.log"])
    for text in (json.dumps(d.to_json()), render_text(d), json.dumps(render_sarif(d))):
        assert "Zq8vR2mK" not in text


@pytest.fixture(scope="module")
def error_files(tmp_path_factory) -> Path:
    """One directory of torchrun error files, one per form, written by torch's own ErrorHandler."""
    pytest.importorskip("torch.distributed.elastic.multiprocessing.errors")
    root = tmp_path_factory.mktemp("errors")
    procs.run([sys.executable, "-c", RECORD_ERRORS, str(root)], input=json.dumps(error_json_messages()).encode(),
              check=True, timeout=240, capture_output=True)
    assert len(list(root.rglob("error.json"))) == len(FORMS)
    return root


def test_each_form_in_a_torchrun_error_file_is_masked_in_text_json_and_sarif(error_files):
    for n, form in enumerate(FORMS):
        d = diagnose_path(error_files / str(n) / "error.json")
        outputs = {"json": json.dumps(d.to_json()), "human": render_text(d), "sarif": json.dumps(render_sarif(d))}
        for output, text in outputs.items():
            assert marker(n) in text, (form.name, output, "the error file's message never reached the output")
            assert leaks(text, [form]) == [], (form.name, output)


def test_names_of_inputs_passed_over_are_masked(tmp_path):
    """What the reader skips (a binary, a FIFO) is listed after the logs are read: it is masked too."""
    token = next(f for f in FORMS if f.name == "hf-token-assignment").secrets[0]
    (tmp_path / "rank0.log").write_text("[rank0]:RuntimeError: boom\n")
    (tmp_path / f"HF_TOKEN={token}.bin").write_bytes(bytes(range(256)) * 64)
    d = diagnose_path(tmp_path)
    assert d.skipped, "the binary was not listed"
    assert token[:12] not in json.dumps(d.to_json())


def test_env_dump_is_masked_where_the_stall_note_quotes_it():
    for start in range(0, len(FORMS), ENV_GROUP):
        forms = FORMS[start : start + ENV_GROUP]
        out = _outputs(env_dump_log(forms))["json"]
        assert all(marker(n) in out for n in range(1, len(forms) + 1)), "the env lines never reached the output"
        assert leaks(out, forms) == []


def _cli_logs(tmp_path: Path) -> list[tuple[str, Path, tuple]]:
    logs = []
    for carrier, make in CARRIERS.items():
        path = tmp_path / f"{carrier}.log"
        path.write_text(make())
        logs.append((carrier, path, FORMS))
    for start in range(0, len(FORMS), ENV_GROUP):
        path = tmp_path / f"env-dump-{start}.log"
        path.write_text(env_dump_log(FORMS[start : start + ENV_GROUP]))
        logs.append(("env-dump", path, FORMS[start : start + ENV_GROUP]))
    for n, form in enumerate(FORMS[:6]):
        path = tmp_path / f"command-{n}.log"
        path.write_text(command_echo_log(form))
        logs.append(("command-echo", path, (form,)))
    return logs


@pytest.mark.parametrize("flag", ["", "--json", "--sarif"])
def test_cli_output_never_shows_a_secret(tmp_path, flag):
    """The real `mltriage diagnose` process, one log per carrier holding every form (a rank each)."""
    for carrier, path, forms in _cli_logs(tmp_path):
        result = run_cli("diagnose", str(path), *([flag] if flag else ["--color", "never"]))
        out = result.stdout.decode() + result.stderr.decode()
        assert result.returncode in (0, 1), (carrier, out[-500:])
        assert leaks(out, forms) == [], (carrier, flag)
        if flag == "--json":
            assert any(marker(n) in out for n in range(len(forms) + 1)), (carrier, "nothing of the carrier reached the JSON")


def test_torchrun_summary_fields_are_masked_in_the_json(tmp_path):
    path = tmp_path / "summary.log"
    path.write_text(CARRIERS["torchrun-summary"]())
    doc = json.loads(run_cli("diagnose", str(path), "--json").stdout)
    tracebacks = [entry["traceback"] for entry in doc["launcher"]]
    assert len(tracebacks) == len(FORMS) and all(MASK in t for t in tracebacks)
    assert leaks(json.dumps(doc["launcher"]), FORMS) == []


def test_a_secret_in_one_of_many_torchrun_entries_is_masked():
    """A 100-worker summary (one finding for all, engine/rank_groups.py): the entry whose host holds a
    token is masked, the others are left as they are."""
    torch = pytest.importorskip("torch.distributed.elastic.multiprocessing.errors")
    from torch.distributed.elastic.multiprocessing.api import ProcessFailure

    token = next(f for f in FORMS if f.name == "huggingface-token").secrets[0]
    failures = {r: ProcessFailure(local_rank=r % 8, pid=10_000 + r, exitcode=-9, error_file="/nonexistent") for r in range(100)}
    summary = torch.ChildFailedError("train.py", failures).format_msg()
    host = next(line.split(":", 1)[1].strip() for line in summary.splitlines() if line.strip().startswith("host"))
    summary = summary.replace(f"host      : {host}", f"host      : {host}-{token}", 1)
    d = diagnose_text(summary + "\n")
    assert len(d.launcher) == 100
    assert not leaks(json.dumps(d.to_json()))
    assert sum(MASK in e.host for e in d.launcher) == 1


def test_a_source_url_is_no_pem_body_and_its_file_names_stay():
    # a catalogue fix step cites the upstream line: its path (60+ base64-like characters) is no secret,
    # and no fragment of it (`bootstrap`) may be masked in the facts that name the same file
    from mltriage.masking import mask_secrets
    url = "https://github.com/NVIDIA/nccl/blob/cb111f764a6d46370f24f75101d6b219bb2dda54/src/bootstrap.cc#L68"
    assert mask_secrets(f"Read the condition around `src/bootstrap.cc:68` ({url}) in the release you run").count("*") == 0
