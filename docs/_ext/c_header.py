"""The C API reference, generated from the installed headers' comments.

The directive ``c-header`` reads a header (a path relative to the source tree's root)
and documents every public declaration in it with the comment block written right
above it: functions (``SHMRING_API``) as Sphinx C-domain functions, structs with
their fields and comments, opaque handles, enums. The header is the one source, so
the reference cannot drift from it; a declaration the C domain cannot parse is
shown as code rather than dropped.
"""
import os
import re

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.domains.c import DefinitionParser
from sphinx.util.docutils import SphinxDirective

# Attributes the public macros stand for, which the reference leaves out.
MACROS = ("SHMRING_API", "SHMRING_MUST_CHECK")
RST_SPECIAL = re.compile(r"([\\`*_|])")


def comment_text(lines):
    """A C comment's text: the `/*`, ` *` and `*/` taken off, paragraphs kept."""
    text = []
    for line in lines:
        line = line.strip()
        line = re.sub(r"^/\*+", "", line)
        line = re.sub(r"\*+/$", "", line)
        line = re.sub(r"^\*(?!/)", "", line)
        text.append(line.strip())
    paragraphs, current = [], []
    for line in text + [""]:
        if line:
            current.append(line)
        elif current:
            paragraphs.append(" ".join(current))
            current = []
    return paragraphs


def escaped(paragraph):
    """A paragraph as literal rST text: no markup, no list or section syntax."""
    paragraph = RST_SPECIAL.sub(r"\\\1", paragraph)
    if re.match(r"^([-+#=]|\d+[.)])", paragraph):
        paragraph = "\\" + paragraph
    return paragraph


def declarations(path):
    """(kind, declaration text, comment paragraphs) for each public declaration."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found, comment, i = [], None, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("/*"):
            start = i
            while "*/" not in lines[i]:
                i += 1
            comment = comment_text(lines[start:i + 1])
            i += 1
            continue
        if line.startswith("SHMRING_API"):
            start = i
            while not lines[i].rstrip().endswith(";"):
                i += 1
            decl = " ".join(part.strip() for part in lines[start:i + 1])
            for macro in MACROS:
                decl = decl.replace(macro + " ", "")
            found.append(("function", decl.rstrip(";").strip(), comment or []))
        elif re.match(r"^typedef (struct|enum) \w+ \{", line) or re.match(
                r"^(enum|struct) \w+ \{", line):
            start = i
            while not lines[i].startswith("}"):
                i += 1
            found.append(("block", "\n".join(lines[start:i + 1]), comment or []))
        elif re.match(r"^typedef struct \w+ \w+;", line):
            name = line.rstrip(";").split()[-1]
            found.append(("type", name, comment or []))
        if line.strip():
            comment = None
        i += 1
    return found


def parses_as_function(decl, config):
    try:
        DefinitionParser(decl, location=None, config=config).parse_declaration(
            "function", "function")
        return True
    except Exception:  # the C domain's DefinitionError, or anything it trips on
        return False


class CHeader(SphinxDirective):
    required_arguments = 1

    def run(self):
        root = os.path.join(self.env.srcdir, "..")
        path = os.path.normpath(os.path.join(root, self.arguments[0]))
        self.env.note_dependency(path)
        rst = []
        for kind, decl, comment in declarations(path):
            body = [line for p in comment for line in ("   " + escaped(p), "")]
            if kind == "function" and parses_as_function(decl, self.config):
                rst += [".. c:function:: " + decl, ""] + body
            elif kind == "type":
                rst += [".. c:type:: " + decl, ""] + body
            else:
                rst += [line[3:] for line in body]
                rst += [".. code-block:: c", ""]
                rst += ["   " + line for line in decl.split("\n")] + [""]
        container = nodes.container()
        self.state.nested_parse(StringList(rst, source=path), self.content_offset,
                                container)
        return container.children


def setup(app):
    app.add_directive("c-header", CHeader)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
