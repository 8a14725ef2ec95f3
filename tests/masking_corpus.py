"""Fake secrets of every form the masker's rules cover, and the carriers a log puts them in.

Every secret is generated here from a fixed seed, in the shape its issuer documents (length,
alphabet, prefix): none is real. A form is how a log prints the secret (bare, in JSON, in a URL, as
a flag...); a carrier is where in a log that text sits (an error line, a traceback's source line,
torchrun's failure summary...). Each carrier line holds a marker (``Q07Z``) beside the secret, so
a test can prove the line reached the output before it checks that the secret did not.
"""

from __future__ import annotations

import base64
import random
import string
from dataclasses import dataclass

_rng = random.Random(20261201)
ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
MIN_LEAK = 8  # a piece of a secret this long in any output is a leak


def _rand(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass(frozen=True)
class Form:
    name: str
    text: str  # how the log prints it
    secrets: tuple[str, ...]  # what must not survive (no piece of MIN_LEAK characters)


def _aws_secret() -> str:
    while True:  # AWS secret access keys: 40 characters of base64; a real one mixes case and digits
        key = _rand(B64, 40)
        if any(c.isdigit() for c in key) and any(c.isupper() for c in key) and any(c.islower() for c in key) and key.count("/") < 3:
            return key


def _forms() -> list[Form]:
    forms: list[Form] = []

    def add(name: str, text: str, *secrets: str) -> None:
        forms.append(Form(name, text, secrets))

    tok = "hf_" + _rand(string.ascii_letters, 34)
    add("huggingface-token", f"token {tok}", tok)
    tok = "ghp_" + _rand(ALNUM, 36)
    add("github-classic-pat", f"git clone https://{tok}@github.com/org/repo.git", tok)
    tok = "github_pat_" + _rand(ALNUM, 22) + "_" + _rand(ALNUM, 59)
    add("github-fine-grained-pat", f"GH auth {tok}", tok)
    tok = "sk-proj-" + _rand(URLSAFE, 48)
    add("openai-key", f"openai key {tok}", tok)
    tok = "sk-ant-api03-" + _rand(URLSAFE, 93) + "AA"
    add("anthropic-key", f"anthropic key {tok}", tok)
    key_id = "AKIA" + _rand("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
    add("aws-access-key-id", f"aws id {key_id}", key_id)
    secret = _aws_secret()
    add("aws-secret-json", f'{{"AccessKeyId": "{key_id}", "SecretAccessKey": "{secret}", "Expiration": "2026-12-01T10:00:00Z"}}', key_id, secret)
    secret = _aws_secret()
    add("aws-secret-bare", f"credentials {secret} loaded", secret)
    secret = _aws_secret()
    add("aws-credentials-file", f"aws_secret_access_key = {secret}", secret)
    key = _rand(HEX, 40)
    add("wandb-login-cli", f"wandb login {key}", key)
    key = _rand(HEX, 40)
    add("wandb-login-call", f'wandb.login(key="{key}")', key)
    key = _rand(HEX, 40)
    add("wandb-key-in-dict", f"{{'WANDB_PROJECT': 'llm-pretrain', 'WANDB_API_KEY': '{key}', 'WANDB_MODE': 'online'}}", key)
    tok = f"xoxb-{_rand(string.digits, 12)}-{_rand(string.digits, 13)}-{_rand(ALNUM, 24)}"
    add("slack-bot-token", f"slack notifier {tok}", tok)
    tok = f"xapp-1-A{_rand(UPPER_ALNUM, 10)}-{_rand(string.digits, 13)}-{_rand(HEX, 64)}"
    add("slack-app-token", f"slack socket mode {tok}", tok)
    path = f"T{_rand(UPPER_ALNUM, 9)}/B{_rand(UPPER_ALNUM, 9)}/{_rand(ALNUM, 24)}"
    add("slack-webhook-url", f"posting alert to https://hooks.slack.com/services/{path}", path)
    pw = _rand(ALNUM, 18)
    add("redis-url-password", f"redis://:{pw}@10.1.2.3:6379/0", pw)
    pw = _rand(ALNUM, 8) + "/" + _rand(ALNUM, 9)
    add("url-password-with-slash", f"postgresql://trainer:{pw}@db.internal:5432/runs", pw)
    pw = _rand(ALNUM, 16)
    basic = base64.b64encode(f"trainer:{pw}".encode()).decode()
    add("http-basic-auth", f"Authorization: Basic {basic}", basic, pw)
    tok = _rand(URLSAFE + ".", 40)
    add("http-bearer", f"Authorization: Bearer {tok}", tok)
    pw = _rand(ALNUM, 14)
    add("password-flag", f"--password {pw}", pw)
    key = _rand(ALNUM, 32)
    add("api-key-flag", f"--api-key={key}", key)
    pw = _rand(ALNUM + "!#%", 16)
    add("json-password", f'{{"user": "trainer", "password": "{pw}", "port": 5432}}', pw)
    body = _rand(B64, 64) + "\\n" + _rand(B64, 64) + "\\n" + _rand(B64, 44) + "=="
    add("pem-private-key", f'"-----BEGIN RSA PRIVATE KEY-----\\n{body}\\n-----END RSA PRIVATE KEY-----\\n"',
        *(piece for piece in body.split("\\n")))
    pw = _rand(ALNUM, 20)
    add("env-password", f"DB_PASSWORD={pw}", pw)
    secret = _rand(ALNUM, 32)
    add("env-secret", f"MY_SERVICE_SECRET={secret}", secret)
    header = _b64url(b'{"alg":"HS256","typ":"JWT"}')
    payload = _b64url(b'{"sub":"' + _rand(HEX, 24).encode() + b'","exp":1798761600}')
    jwt = f"{header}.{payload}.{_rand(URLSAFE, 43)}"
    add("jwt", f"session {jwt}", jwt)
    tok = "glpat-" + _rand(URLSAFE, 20)
    add("gitlab-pat", f"gitlab {tok}", tok)
    key = "AIza" + _rand(URLSAFE, 35)
    add("google-api-key", f"maps key {key}", key)
    tok = "npm_" + _rand(ALNUM, 36)
    add("npm-token", f"npm {tok}", tok)
    pw = _rand(ALNUM, 15)
    add("curl-user", f"curl -u trainer:{pw} https://artifacts.internal/upload", pw)
    return forms


FORMS: tuple[Form, ...] = tuple(_forms())


def leaks(output: str, forms=FORMS) -> list[str]:
    """Every (form, piece) of a secret of at least MIN_LEAK characters found in ``output``."""
    found = []
    for form in forms:
        for secret in form.secrets:
            for i in range(len(secret) - MIN_LEAK + 1):
                if secret[i : i + MIN_LEAK] in output:
                    found.append(f"{form.name}: {secret[i:i + MIN_LEAK]!r} of {secret!r}")
                    break
    return found


def marker(n: int) -> str:
    return f"Q{n:02d}Z"


# -- carriers: each returns a whole log holding every form, one rank per form ------------------------
# Formats: torch.distributed's `[rankN]:` prefix (torchrun --tee / local_ranks_filter); Python's
# traceback layout; torchrun's ChildFailedError summary (torch/distributed/elastic/multiprocessing/
# errors/__init__.py, `_format_failure`); a shell prompt echoing the command.


def error_line_log(forms=FORMS) -> str:
    return "".join(f"[rank{n}]:RuntimeError: request {marker(n)} rejected: {f.text}\n" for n, f in enumerate(forms))


def _traceback(n: int, source_line: str, last: str) -> str:
    p = f"[rank{n}]:"
    return (f"{p}Traceback (most recent call last):\n"
            f'{p}  File "/workspace/train.py", line 41, in <module>\n'
            f"{p}    main()\n"
            f'{p}  File "/workspace/train.py", line 27, in main\n'
            f"{p}    {source_line}\n"
            f"{p}{last}\n")


def exception_message_log(forms=FORMS) -> str:
    return "".join(_traceback(n, "client = connect(cfg)", f"ValueError: {marker(n)} bad credentials: {f.text}")
                   for n, f in enumerate(forms))


def source_line_log(forms=FORMS) -> str:
    return "".join(_traceback(n, f"client = connect('{marker(n)}', {f.text!r})", f"ConnectionError: {marker(n)} store unreachable")
                   for n, f in enumerate(forms))


def torchrun_summary_log(forms=FORMS) -> str:
    entries = []
    for n, f in enumerate(forms):
        entries.append(
            f"[{n}]:\n"
            f"  time      : 2026-12-01_10:00:{n:02d}\n"
            f"  host      : node-{n}.cluster\n"
            f"  rank      : {n} (local_rank: {n % 8})\n"
            f"  exitcode  : 1 (pid: {4000 + n})\n"
            f"  error_file: <N/A>\n"
            f"  traceback : ValueError: {marker(n)} bad credentials: {f.text}\n"
        )
    return ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
            "============================================================\n"
            "train.py FAILED\n"
            "------------------------------------------------------------\n"
            "Failures:\n" + "".join(entries[1:]) +
            "------------------------------------------------------------\n"
            "Root Cause (first observed failure):\n" + entries[0] +
            "============================================================\n")


# PyTorch 2.x's CUDA OOM message (c10/cuda/CUDACachingAllocator.cpp DeviceCachingAllocator::malloc, the
# format cited by signatures/cuda/cuda-oom.toml's first sample): its pattern is not anchored at the
# end, so a line of any length fires it, and the engine keeps the first 2,048 characters.
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB. GPU 1 has a total capacity of "
       "139.72 GiB of which 11.44 GiB is free. Including non-PyTorch memory, this process has 128.27 GiB memory in "
       "use. Of the allocated memory 96.51 GiB is allocated by PyTorch, and 30.93 GiB is reserved by PyTorch but "
       "unallocated.")


def long_line_log(forms=FORMS, edge: int = 2048) -> str:
    """Each form's secret straddles the ``edge`` character of its line (where the engine cuts a line)."""
    out = []
    for n, f in enumerate(forms):
        head = f"[rank{n}]:{OOM} request {marker(n)} from "
        pad = max(0, edge - 10 - f.text.find(f.secrets[0]) - len(head) - 1)
        out.append(f"{head}{'x' * pad} {f.text} tail\n")
    return "".join(out)


def exception_edge_log(forms=FORMS, edge: int = 500) -> str:
    """The secret straddles the ``edge`` character of the exception message (where a traceback's message is cut)."""
    out = []
    for n, f in enumerate(forms):
        head = f"{marker(n)} bad credentials: "
        pad = max(0, edge - 10 - f.text.find(f.secrets[0]) - len(head))
        out.append(_traceback(n, "client = connect(cfg)", f"ValueError: {head}{'y' * pad} {f.text}"))
    return "".join(out)


def command_echo_log(form: Form, n: int = 0) -> str:
    """A shell prompt echoing the launch command (with the secret in it), then the script's traceback:
    the verify step quotes the command back ("rerun <command>") and a note names it."""
    return (f"user@node-{n}:~/run$ torchrun --nproc_per_node 2 train.py --tag {marker(n)} {form.text}\n"
            + _traceback(n, "loss = step(batch)", "ZeroDivisionError: division by zero").replace(f"[rank{n}]:", ""))


def env_dump_log(forms) -> str:
    """Ranks 1.. print their environment (`env`, one VAR=value a line) as the last thing they say, and
    rank 0's progress bar is still at 0% when the log ends: the diagnosis of that stall quotes each
    rank's last line (8 ranks at most, so callers pass at most 7 forms)."""
    out = []
    for n, f in enumerate(forms, start=1):
        out.append(f"[rank{n}]:RUN_TAG=llm\n[rank{n}]:LAUNCH_ARGS={marker(n)} {f.text}\n")
    out.append("[rank0]:Epoch 0:   0%|          | 0/100 [00:00<?, ?it/s]\n")
    return "".join(out)


CARRIERS = {
    "error-line": error_line_log,
    "exception-message": exception_message_log,
    "traceback-source-line": source_line_log,
    "torchrun-summary": torchrun_summary_log,
    "2048-char-line": long_line_log,
    "500-char-exception-message": exception_edge_log,
}
