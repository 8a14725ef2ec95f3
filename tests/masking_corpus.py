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

    # -- issue 22: forms found by context (an assignment, a flag that takes a password, a URL's
    # userinfo or query, a header, a Python repr) and token shapes of further issuers
    key = "rk_live_" + _rand(ALNUM, 99)  # Stripe: restricted keys rk_live_, webhook signing secrets whsec_
    add("stripe-restricted-key", f"stripe client ready ({key})", key)
    secret = "whsec_" + _rand(ALNUM, 32)
    add("stripe-webhook-secret", f"verifying webhook with {secret},", secret)
    pw = _rand(ALNUM, 5) + "@" + _rand(ALNUM, 6) + "@" + _rand(ALNUM, 4)
    add("url-password-with-at", f"postgresql://trainer:{pw}@db.internal:5432/runs", pw)
    pw = _rand(ALNUM, 16)
    add("mysql-attached-password", f"mysql -h db.internal -u root -p{pw} runs", pw)
    pw = _rand(ALNUM, 16)
    add("sshpass", f"sshpass -p {pw} ssh trainer@node-2 nvidia-smi", pw)
    pw = _rand(ALNUM, 16)
    add("docker-login-p", f"docker login -u ci-bot -p {pw} registry.internal:5000", pw)
    pw = _rand(ALNUM, 16)
    add("openssl-passin", f"openssl pkcs12 -in client.p12 -passin pass:{pw} -nokeys", pw)
    pw = _rand(ALNUM, 16)
    add("netrc-line", f"machine huggingface.co login trainer password {pw}", pw)
    pw = _rand(ALNUM, 16)
    add("fullwidth-colon", f"数据库 password：{pw}", pw)
    tok = _rand(ALNUM, 24)
    add("fullwidth-equals", f"api_token＝{tok}", tok)
    pw = _rand(ALNUM, 16)
    add("json-escaped-quotes", f'{{"config": "{{\\"db_password\\": \\"{pw}\\", \\"port\\": 5432}}"}}', pw)
    tok = _rand(URLSAFE, 32)
    add("json-escaped-bearer", f'"{{\\"Authorization\\": \\"Bearer {tok}\\"}}"', tok)
    pw = _rand(ALNUM, 16)
    add("url-query-password", f"GET https://api.internal/v1/login?user=trainer&password={pw}&next=/runs", pw)
    pw = _rand(ALNUM, 16)
    add("requests-auth-tuple", f"requests.get(url, auth=('trainer', '{pw}'), timeout=30)", pw)
    pw = _rand(ALNUM, 16)
    add("requests-basic-auth", f"HTTPBasicAuth('trainer', '{pw}')", pw)
    # CPython's traceback with capture_locals=True prints each local as `    name = repr(value)`
    # (Lib/traceback.py, StackSummary.format_frame_summary, v3.11.0)
    pw = _rand(ALNUM, 16)
    add("locals-password", f"    db_password = '{pw}'", pw)
    key = _rand(ALNUM, 32)
    add("locals-bytes-key", f"    signing_key = b'{key}'", key)
    pw = _rand(ALNUM, 16)
    add("locals-dict", f"    creds = {{'user': 'trainer', 'password': '{pw}'}}", pw)
    pw = _rand(ALNUM, 16)
    add("locals-auth-tuple", f"    auth = ('trainer', '{pw}')", pw)
    sig = _rand(ALNUM + "%", 43) + "%3D"  # Azure SAS: sig is the URL-encoded base64 HMAC
    add("azure-sas-sig", "https://acct.blob.core.windows.net/ckpt/model.bin?sv=2022-11-02&ss=b&srt=o&sp=r"
        f"&se=2026-12-01T00:00:00Z&sig={sig}", sig)
    key_id = "AKIA" + _rand("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
    sig = _rand(HEX, 64)  # AWS SigV4 presigned URL (X-Amz-Signature: 64 hex digits)
    add("aws-presigned-url", f"https://ckpt.s3.us-east-1.amazonaws.com/step-900.pt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        f"&X-Amz-Credential={key_id}%2F20261201%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261201T000000Z"
        f"&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature={sig}", key_id, sig)
    tok = _rand(B64, 300)
    add("aws-session-token", f"AWS_SESSION_TOKEN={tok}", tok)
    key = _rand(B64, 86) + "=="
    add("azure-connection-string", f"DefaultEndpointsProtocol=https;AccountName=ckpts;AccountKey={key};EndpointSuffix=core.windows.net", key)
    tok = "dapi" + _rand(HEX, 32)
    add("databricks-token", f"databricks workspace client ({tok})", tok)
    tok = "hvs." + _rand(URLSAFE, 91)
    add("vault-token", f"vault renewed {tok}.", tok)
    tok = "r8_" + _rand(ALNUM, 37)
    add("replicate-token", f"replicate client {tok},", tok)
    sid, csrf = _rand(ALNUM, 32), _rand(ALNUM, 32)
    add("cookie-header", f"Cookie: sessionid={sid}; csrftoken={csrf}", sid, csrf)
    sess = _rand(URLSAFE, 40)
    add("set-cookie-header", f"Set-Cookie: session={sess}; Path=/; HttpOnly", sess)
    tok = f"{_rand(string.digits, 10)}:AA{_rand(URLSAFE, 33)}"
    add("telegram-bot-token", f"POST https://api.telegram.org/bot{tok}/sendMessage", tok)
    dsn_key = _rand(HEX, 32)
    add("sentry-dsn", f'sentry_sdk.init(dsn="https://{dsn_key}@o450123.ingest.sentry.io/4504123")', dsn_key)
    tok = "hf_" + _rand(string.ascii_letters, 34)
    add("hf-token-assignment", f"HF_TOKEN={tok}", tok)
    key = _rand(ALNUM, 32)
    add("x-api-key-header", f"X-Api-Key: {key}", key)
    key = _rand(HEX, 32)
    add("kaggle-json", f'{{"username": "trainer", "key": "{key}"}}', key)
    pw = _rand(ALNUM, 16)
    add("openssl-passout", f"openssl req -x509 -newkey rsa:2048 -passout pass:{pw} -keyout key.pem", pw)
    # -- issue 22, a second pass: client passwords by their own flags and variables, and further
    # issuers' documented token prefixes
    pw = _rand(ALNUM, 16)
    add("mysql-pwd-variable", f"MYSQL_PWD={pw} mysql -h db.internal -u root runs", pw)
    pw = _rand(ALNUM, 16)
    add("sshpass-variable", f"SSHPASS={pw} sshpass -e ssh trainer@node-2", pw)
    pw = _rand(ALNUM, 16)
    add("redis-cli-a", f"redis-cli -h 10.1.2.3 -p 6379 -a {pw} ping", pw)
    pw = _rand(ALNUM, 16)
    add("redis-requirepass", f"redis-server --port 6379 --requirepass {pw}", pw)
    pw = _rand(ALNUM, 16)
    add("keytool-storepass", f"keytool -importkeystore -srckeystore a.p12 -srcstorepass {pw} -destkeystore b.jks", pw)
    pw = _rand(ALNUM, 16)
    add("sqlcmd-P", f"sqlcmd -S db.internal -U sa -P {pw} -Q 'SELECT 1'", pw)
    pw = _rand(ALNUM, 16)
    add("mongosh-p", f"mongosh mongodb://db.internal:27017 -u admin -p {pw}", pw)
    pw = _rand(ALNUM, 16)
    add("smbclient-U", f"smbclient //fs.internal/ckpt -U trainer%{pw} -c ls", pw)
    pw = _rand(ALNUM, 16)
    add("quoted-key-fullwidth-colon", f'credentials: "password"：{pw}', pw)
    pw = _rand(ALNUM, 16)
    add("json-in-json-escaped", f'{{\\\\\\"api_key\\\\\\": \\\\\\"{pw}\\\\\\"}}', pw)  # JSON in a JSON string, in JSON
    tok = "nvapi-" + _rand(URLSAFE, 64)  # NVIDIA API catalog / NGC
    add("nvidia-api-key", f"NIM client ready ({tok})", tok)
    tok = "gsk_" + _rand(ALNUM, 52)
    add("groq-key", f"groq client {tok},", tok)
    tok = "pcsk_" + _rand(ALNUM, 6) + "_" + _rand(ALNUM, 60)
    add("pinecone-key", f"pinecone index client {tok}", tok)
    tok = "xai-" + _rand(ALNUM, 80)
    add("xai-key", f"xai client ({tok})", tok)
    tok = "ya29." + _rand(URLSAFE, 120)
    add("google-oauth-access-token", f"gcs upload with {tok}", tok)
    tok = _rand(URLSAFE, 68)
    add("discord-webhook", f"posting alert to https://discord.com/api/webhooks/{_rand(string.digits, 18)}/{tok}", tok)
    sig = _rand(HEX, 64)
    add("gcs-signed-url", "https://storage.googleapis.com/ckpt/step-900.pt?X-Goog-Algorithm=GOOG4-RSA-SHA256"
        f"&X-Goog-Expires=3600&X-Goog-Signature={sig}", sig)
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


def chained_traceback_log(forms=FORMS) -> str:
    """The secret in the first exception of a chain; CPython prints the cause, then "The above
    exception was the direct cause of the following exception:" (Lib/traceback.py, _cause_message,
    v3.11.0), then the exception raised from it."""
    out = []
    for n, f in enumerate(forms):
        p = f"[rank{n}]:"
        first = _traceback(n, "return pool.connect(cfg)", f"ValueError: {marker(n)} bad credentials: {f.text}")
        out.append(first + f"{p}\n{p}The above exception was the direct cause of the following exception:\n{p}\n"
                   + _traceback(n, "raise RuntimeError('store unreachable') from exc", "RuntimeError: store unreachable"))
    return "".join(out)


def torchrun_error_file_log(forms=FORMS) -> str:
    """torchrun's failure summary naming each worker's error file (`error_file:`), the secret in its path."""
    entries = []
    for n, f in enumerate(forms):
        entries.append(
            f"[{n}]:\n"
            f"  time      : 2026-12-01_10:00:{n:02d}\n"
            f"  host      : node-{n}.cluster\n"
            f"  rank      : {n} (local_rank: {n % 8})\n"
            f"  exitcode  : 1 (pid: {4000 + n})\n"
            f"  error_file: /tmp/torchelastic_{marker(n)}/{f.text}/attempt_0/{n}/error.json\n"
            f"  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
        )
    return ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
            "============================================================\n"
            "train.py FAILED\n"
            "------------------------------------------------------------\n"
            "Failures:\n" + "".join(entries[1:]) +
            "------------------------------------------------------------\n"
            "Root Cause (first observed failure):\n" + entries[0] +
            "============================================================\n")


# vLLM's P2P self-test failure (signatures/vllm/vllm-p2p-access-test-crashed.toml, built from
# vllm-project/vllm v0.8.5 vllm/distributed/device_communicators/custom_all_reduce_utils.py): its fix
# adds --disable-custom-all-reduce, so the report quotes the log's own `vllm serve` command back with it
P2P_TEST_FAILED = "RuntimeError: Error happened when batch testing peer-to-peer access from (0, 0, 1, 1) to (0, 1, 0, 1):"


def launch_command_log(forms=FORMS) -> str:
    """The shell prompt echoing `vllm serve ...` with the secret among its arguments (and the tag
    beside it), then vLLM's P2P test failure: the fix's relaunch command repeats the whole line."""
    form = forms[0]  # one command per log: the report quotes the first one the log shows
    return (f"user@node-0:~/serve$ vllm serve meta-llama/Llama-3.1-8B --tensor-parallel-size 2 --served-model-name {marker(0)} "
            f"{form.text}\n{P2P_TEST_FAILED}\n")


CARRIERS = {
    "error-line": error_line_log,
    "exception-message": exception_message_log,
    "traceback-source-line": source_line_log,
    "torchrun-summary": torchrun_summary_log,
    "2048-char-line": long_line_log,
    "500-char-exception-message": exception_edge_log,
    "chained-traceback": chained_traceback_log,
    "torchrun-error-file-path": torchrun_error_file_log,
    "launch-command": launch_command_log,
}


# torchrun's error file, as torch.distributed.elastic writes it (ErrorHandler.record_exception,
# torch/distributed/elastic/multiprocessing/errors/error_handler.py, torch 2.13.0): made by the real
# handler in a subprocess (tests/test_masking.py), the secret in the exception's message
RECORD_ERRORS = """
import json, os, sys
from torch.distributed.elastic.multiprocessing.errors import ErrorHandler
texts = json.loads(sys.stdin.read())
for n, text in enumerate(texts):
    path = os.path.join(sys.argv[1], str(n), "error.json")
    os.makedirs(os.path.dirname(path))
    os.environ["TORCHELASTIC_ERROR_FILE"] = path
    try:
        raise ValueError(text)
    except ValueError as exc:
        ErrorHandler().record_exception(exc)
"""


def error_json_messages(forms=FORMS) -> list[str]:
    return [f"{marker(n)} bad credentials: {f.text}" for n, f in enumerate(forms)]
