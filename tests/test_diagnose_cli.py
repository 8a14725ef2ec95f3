"""The `mltriage` command as a user runs it: real subprocesses, real files, exit codes."""

import json
import shutil
from pathlib import Path

from cli_runner import ROOT, run_cli

CHAINED = Path(__file__).parent / "data" / "chained_exception.log"


def test_diagnose_failure_exit_1_and_human_output():
    r = run_cli("diagnose", str(CHAINED))
    assert r.returncode == 1, r.stderr
    out = r.stdout.decode()
    assert "ROOT CAUSE" in out and "RuntimeError" in out
    assert "\x1b[" not in out  # no colour when not a TTY
    assert r.stderr == b""


def test_diagnose_json_schema_v1():
    r = run_cli("diagnose", str(CHAINED), "--json")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["schema"] == "mltriage.diagnosis/v1"
    assert doc["status"] == "failure"
    f = doc["findings"][0]
    for key in ("signature", "title", "category", "severity", "role", "rank", "lines", "evidence", "root_cause", "fix", "verify", "confidence"):
        assert key in f
    assert set(f["fix"]) >= {"env", "steps"}
    assert f["severity"] in ("critical", "error", "warning", "info")
    assert f["role"] in ("root-cause", "collateral", "context")


def test_diagnose_sarif():
    r = run_cli("diagnose", str(CHAINED), "--sarif")
    doc = json.loads(r.stdout)
    assert doc["version"] == "2.1.0"
    result = doc["runs"][0]["results"][0]
    assert result["ruleId"] == "python-unhandled-exception"
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 1, "endLine": 16}


def test_stdin_and_healthy_exit_0():
    r = run_cli("diagnose", "-", input=b"epoch 1 loss 0.5\nepoch 2 loss 0.4\n")
    assert r.returncode == 0
    assert b"no failure found" in r.stdout


def test_stdin_failure():
    r = run_cli("diagnose", "-", input=CHAINED.read_bytes())
    assert r.returncode == 1


def test_bad_inputs_exit_2_without_traceback(tmp_path):
    binary = tmp_path / "weights.bin"
    binary.write_bytes(bytes(range(256)) * 1000)
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    emptydir = tmp_path / "nothing"
    emptydir.mkdir()
    for args, needle in [
        (("diagnose", str(tmp_path / "missing.log")), "no such file"),
        (("diagnose", str(binary)), "binary"),
        (("diagnose", str(empty)), "empty"),
        (("diagnose", str(emptydir)), "no readable log files"),
        (("diagnose", "--bogus"), "unrecognized arguments"),
        (("explain", "no-such-signature"), "unknown signature id"),
    ]:
        r = run_cli(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        err = r.stderr.decode()
        assert needle in err, (args, err)
        assert "Traceback" not in err



def test_internal_error_exits_4_with_one_line(tmp_path):
    """A failure mltriage does not expect (here: a signature file whose read fails with EIO, a
    symlink to /proc/self/mem) is an internal error: exit 4, distinct from usage errors (2), one
    line on stderr; MLTRIAGE_DEBUG=1 shows the traceback."""
    library = tmp_path / "signatures"
    (library / "area").mkdir(parents=True)
    (library / "area" / "unreadable.toml").symlink_to("/proc/self/mem")
    env = {"MLTRIAGE_SIGNATURES": str(library), "MLTRIAGE_CACHE_DIR": str(tmp_path / "cache")}
    example = str(ROOT / "examples" / "torchrun-rank2-indexerror.log")
    for args in (("diagnose", example), ("signatures", "list"), ("explain", "cuda-oom")):
        r = run_cli(*args, env=env)
        err = r.stderr.decode()
        assert r.returncode == 4, (args, r.returncode, err)
        assert err.startswith("mltriage: internal error: OSError") and "MLTRIAGE_DEBUG=1" in err, err
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert r.stdout == b""
    r = run_cli("signatures", "list", env={**env, "MLTRIAGE_DEBUG": "1"})
    assert r.returncode == 1 and "Traceback (most recent call last)" in r.stderr.decode()

def test_mixed_directory(tmp_path):
    shutil.copy(CHAINED, tmp_path / "rank_2.log")
    (tmp_path / "core.bin").write_bytes(b"\x7fELF" + bytes(range(256)) * 10)
    r = run_cli("diagnose", str(tmp_path), "--json")
    doc = json.loads(r.stdout)
    assert r.returncode == 1
    assert doc["initiating_rank"] == 2
    assert doc["inputs"]["skipped"][0]["name"] == "core.bin"


def test_ten_megabyte_single_line(tmp_path):
    log = tmp_path / "oneline.log"
    log.write_bytes(b"0123456789" * 1024 * 1024)
    r = run_cli("diagnose", str(log))
    assert r.returncode == 0
    assert b"no failure found" in r.stdout


def test_explain_prints_markdown_entry():
    r = run_cli("explain", "host-oom-killer")
    assert r.returncode == 0
    text = r.stdout.decode()
    assert text.startswith("## ")
    assert "### Why it happens" in text and "### References" in text


def test_signatures_list_and_schema():
    r = run_cli("signatures", "list", "--json")
    ids = {s["id"] for s in json.loads(r.stdout)}
    assert {"host-oom-killer", "python-unhandled-exception"} <= ids
    schema = json.loads(run_cli("signatures", "schema").stdout)
    assert schema["title"] == "Signature"


def _copy_one(tmp_path, name="host/host-oom-killer.toml"):
    root = tmp_path / "sigs"
    (root / "host").mkdir(parents=True)
    shutil.copy(ROOT / "signatures" / name, root / name)
    return root


def test_lint_names_file_and_field_of_a_malformed_signature(tmp_path):
    root = _copy_one(tmp_path)
    bad = root / "host" / "host-broken.toml"
    text = (root / "host" / "host-oom-killer.toml").read_text().replace('id = "host-oom-killer"', 'id = "host-broken"')
    bad.write_text(text.replace('severity = "critical"', 'severity = "catastrophic"'))
    (root / "host" / "host-garbage.toml").write_text("this is = = not toml")
    r = run_cli("signatures", "lint", str(root))
    out = r.stdout.decode()
    assert r.returncode == 1
    assert "host-broken.toml: field 'severity'" in out
    assert "host-garbage.toml: not valid TOML" in out
    # a malformed file never stops a diagnosis with that library
    r = run_cli("diagnose", str(CHAINED), env={"MLTRIAGE_SIGNATURES": str(root)})
    assert r.returncode in (0, 1) and b"Traceback (most recent" not in r.stderr


def test_lint_rejects_duplicate_ids_weak_and_backtracking_matchers(tmp_path):
    root = _copy_one(tmp_path)
    base = (root / "host" / "host-oom-killer.toml").read_text()
    (root / "host" / "host-dup.toml").write_text(base)  # same id inside
    assert "patterns = [\n" in base
    weak = base.replace('id = "host-oom-killer"', 'id = "host-weak"').replace("patterns = [\n", "patterns = [\n    '(?i)error',\n", 1)
    (root / "host" / "host-weak.toml").write_text(weak)
    slow = base.replace('id = "host-oom-killer"', 'id = "host-slow"').replace(
        "patterns = [\n", "patterns = [\n    'Out of memory:(\\s*\\S*\\s*)*constraint$',\n", 1
    )
    (root / "host" / "host-slow.toml").write_text(slow)
    r = run_cli("signatures", "lint", str(root))
    out = r.stdout.decode()
    assert r.returncode == 1
    assert "host-dup.toml: field 'id'" in out
    assert "host-weak.toml: field 'match.patterns'" in out and "weak matcher" in out
    assert "host-slow.toml: field 'match'" in out and "backtracks catastrophically" in out


def test_color_only_when_forced():
    r = run_cli("diagnose", str(CHAINED), "--color", "always")
    assert b"\x1b[" in r.stdout


def test_probe_subcommand_without_a_gpu_explains_in_one_line(tmp_path):
    # this machine (and CI) has no NVIDIA driver: the real NVML/CUDA loading path says so
    r = run_cli("probe", env={"MLTRIAGE_CACHE_DIR": str(tmp_path)})
    assert r.returncode == 3
    lines = r.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "no usable GPU" in lines[0]
    assert b"Traceback" not in r.stderr


def test_a_backtracking_regex_costs_a_warning_not_a_hang(tmp_path):
    root = _copy_one(tmp_path)
    base = (root / "host" / "host-oom-killer.toml").read_text()
    (root / "host" / "host-oom-killer.toml").write_text(
        base.replace("patterns = [\n", "patterns = [\n    'Out of memory:(\\s*\\S*\\s*)*constraint$',\n", 1)
    )
    log = tmp_path / "dmesg.log"
    line = "Out of memory: Killed process 48213 (python)" + " " * 20_000 + "constraint!"
    log.write_text(line + "\n")
    r = run_cli("diagnose", str(log), "--json", env={"MLTRIAGE_SIGNATURES": str(root), "MLTRIAGE_CACHE_DIR": str(tmp_path / "cache")},
                timeout=60)
    doc = json.loads(r.stdout)
    # the pattern's shape is found when the library is built: it is never run, and the signature's other patterns are
    assert any("super-linear shape" in w for w in doc["warnings"]), doc["warnings"]
    assert [f["signature"] for f in doc["findings"]] == ["host-oom-killer"]  # (from its trigger phrase: no facts on this line)
