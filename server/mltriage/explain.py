"""An encyclopedia entry as Markdown: for `mltriage explain`, hovers and the diagnosis view."""

from __future__ import annotations

from mltriage import markdown as md
from mltriage.templates import fill_with as fill
from mltriage.library import Library, load_library
from mltriage.masking import mask_secrets
from mltriage.model import LaunchFlag, export_line
from mltriage.schema import Signature


def render_entry_markdown(signature_id: str, facts: dict[str, str] | None = None, library: Library | None = None) -> str:
    """Raises KeyError for an unknown id."""
    library = library or load_library()
    entry = library.entry(signature_id)
    if entry is None:
        raise KeyError(signature_id)
    return entry_markdown(entry, facts)


class _Placeholder(dict):
    def __missing__(self, key: str) -> str:
        return f"‹{key}›"  # no value from a log line: show the slot, not a format field


def entry_markdown(entry: Signature, facts: dict[str, str] | None = None) -> str:
    """The entry; with ``facts`` (a log line's, so anything at all) the sentences they fill are made
    literal text but for their code spans, and the facts are shown as code (`markdown`)."""
    filled = md.text if facts else str
    facts = _Placeholder({k: mask_secrets(v) for k, v in (facts or {}).items()})
    out = [f"## {filled(fill(entry.title, facts))}", ""]
    out.append(f"`{entry.id}` · {entry.area} · {entry.category} · severity **{entry.severity}** · usually **{entry.role}**")
    out.append("")
    out.append(filled(fill(entry.summary, facts)))
    if facts:
        out += ["", "**From this line:** " + ", ".join(f"{md.escape(k)} = {md.code(v)}" for k, v in sorted(facts.items()))]
    out += ["", "### Why it happens", "", entry.mechanism.strip(), ""]
    out += ["### Symptoms", "", *[f"- {s}" for s in entry.symptoms], ""]
    out += ["### How to confirm", "", *[f"- {s}" for s in entry.confirm], ""]
    out += ["### Fix", "", entry.fix.summary, ""]
    if entry.fix.env:
        out += ["```sh", *[f"{export_line(e.name, e.value)}  # {e.why}" for e in entry.fix.env], "```", ""]
    for flag in entry.fix.flags:  # the same wording as the report and the hover
        out += [f"- {LaunchFlag(flag.command, flag.flag, flag.value, flag.why).instruction}: {flag.why}"]
    out += [f"- {s}" for s in entry.fix.steps]
    if entry.fix.commands:
        out += ["", "```sh", *entry.fix.commands, "```"]
    for change in entry.fix.stacks:
        out += [f"- **{change.stack}**: {change.change}"]
    out += ["", "### Verify", "", *md.code_block([fill(entry.verify, facts)]), ""]
    out += ["### Prevention", "", *[f"- {s}" for s in entry.prevention], ""]
    affects = ", ".join(f"{a.system} ({a.versions})" for a in entry.affects)
    out += [f"**Affects:** {affects}", ""]
    if entry.related:
        out += ["**Related:** " + ", ".join(f"`{r}`" for r in entry.related), ""]
    out += ["### References", "", *[f"- [{r.title}]({r.url})" for r in entry.references], ""]
    return "\n".join(out)
