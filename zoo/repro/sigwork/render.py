"""Render templates: @@FILE:name@@ -> the file's content (real outputs), @@LINES:name:a:b@@ -> lines a..b (1-based, inclusive)."""
import re, sys, pathlib, json
root = pathlib.Path("/tmp/sigwork")
def sub(m):
    parts = m.group(1).split(":")[1:]
    text = (root / parts[0]).read_text(errors="replace").replace("\x00", "")
    if len(parts) == 3:
        lines = text.splitlines()
        text = "\n".join(lines[int(parts[1]) - 1:int(parts[2])]) + "\n"
    if m.group(1).startswith("TOMLSTR:"):
        return json.dumps(text.rstrip("\n") + "\n", ensure_ascii=False).replace("\x7f", "\\u007f")
    assert "'''" not in text
    return text.rstrip("\n")
for tpl in sys.argv[1:]:
    p = pathlib.Path(tpl)
    area = re.search(r'^area = "([^"]+)"', p.read_text(), re.M).group(1)
    out = pathlib.Path("/work/main/signatures") / area / p.name
    out.write_text(re.sub(r"@@([^@]+)@@", sub, p.read_text()))
    print("wrote", out)
