#!/usr/bin/env python3
"""How much of a module's public API a DocC catalog curates under its topics.

Used by `bash scripts/docs`. Standard library only.

    python3 scripts/docs_curation.py <module> <symbol graph folder> <catalog folder> [--list]

Reads the module's symbol graphs (`<module>.symbols.json` and the extensions it declares on
other modules' types, `<module>@*.symbols.json`) and every Markdown file of the catalog.

- A public *type* (struct, class, enum, protocol, type alias, actor) is curated when a
  `## Topics` section lists it: a list item ``- ``Name`` `` (or ``Module/Name``, with or
  without a disambiguation suffix).
- A public *member* (method, property, initializer, case, subscript, operator, associated
  type, and the module's global functions) is curated when a Topics section lists it, or
  when its type has an extension file (`# ``Module/Type`` `) with a Topics section of its
  own: DocC then arranges every member of that page. Members the compiler synthesizes
  (`Equatable`'s `!=`, …) are left out: DocC files them under the protocol's default
  implementations by itself.

Curation is by topic, not by a share: exits 1 when a public type is under no topic, or when
an extension page (`Extensions/*.md`) lists fewer than two members (a page that lists one
method adds nothing to DocC's own arrangement). Prints the share of members curated.
"""

import json
import re
import sys
from pathlib import Path

TYPE_KINDS = {"swift.struct", "swift.class", "swift.enum", "swift.protocol", "swift.typealias", "swift.actor"}
LINK = re.compile(r"``([^`]+)``")
MIN_PAGE_ENTRIES = 2


def load_symbols(module, folder):
    """{precise identifier: (kind, path)} of the module's public symbols."""
    symbols = {}
    files = [folder / f"{module}.symbols.json", *sorted(folder.glob(f"{module}@*.symbols.json"))]
    for file in files:
        if not file.exists():
            continue
        graph = json.loads(file.read_text(encoding="utf-8"))
        for symbol in graph["symbols"]:
            identifier = symbol["identifier"]["precise"]
            if "::SYNTHESIZED::" in identifier:
                continue
            if symbol.get("accessLevel") not in ("public", "open"):
                continue
            path = symbol["pathComponents"]
            if any(component.startswith("_") for component in path):
                continue
            symbols[identifier] = (symbol["kind"]["identifier"], tuple(path))
    return symbols


def normalize(link, module):
    """A link's path components without the module and any disambiguation suffix."""
    parts = [part for part in link.split("/") if part]
    # The module's own name, or that of the module whose type it extends (Depot/Middleware/…).
    if len(parts) > 1 and parts[0] in (module, "Depot"):
        parts = parts[1:]
    cleaned = []
    for part in parts:
        # `create(_:)-(Entity)`, `zip(_:_:)-1abc2`, `Link-swift.struct`: drop the suffix.
        match = re.match(r"^(.*?\))-.+$", part) or re.match(r"^([^()]+?)-[\w.()]+$", part)
        cleaned.append(match.group(1) if match else part)
    return tuple(cleaned)


def read_catalog(catalog, module):
    """(paths listed under a Topics section, paths of types whose extension file has Topics)."""
    listed, pages_with_topics = set(), set()
    for file in sorted(catalog.glob("**/*.md")):
        lines = file.read_text(encoding="utf-8").splitlines()
        title = lines[0] if lines else ""
        in_topics = False
        has_topics = False
        for line in lines:
            if line.startswith("## "):
                in_topics = line.strip() == "## Topics"
                has_topics = has_topics or in_topics
                continue
            if in_topics and line.lstrip().startswith("- "):
                for link in LINK.findall(line):
                    listed.add(normalize(link, module))
        extension = LINK.fullmatch(title[2:].strip()) if title.startswith("# ") else None
        if extension and has_topics:
            page = normalize(extension.group(1), module)
            if page:
                pages_with_topics.add(page)
    return listed, pages_with_topics


def main():
    module, folder, catalog = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    show = "--list" in sys.argv[4:]
    symbols = load_symbols(module, folder)
    listed, pages_with_topics = read_catalog(catalog, module)

    types = sorted({path for kind, path in symbols.values() if kind in TYPE_KINDS})
    members = sorted({path for kind, path in symbols.values() if kind not in TYPE_KINDS})
    uncurated_types = [path for path in types if path not in listed]

    def member_curated(path):
        return path in listed or path[:-1] in pages_with_topics

    uncurated_members = [path for path in members if not member_curated(path)]
    type_share = (len(types) - len(uncurated_types)) / max(len(types), 1)
    member_share = (len(members) - len(uncurated_members)) / max(len(members), 1)
    print(
        f"{module}: types curated {len(types) - len(uncurated_types)}/{len(types)} ({type_share:.0%}), "
        f"members curated {len(members) - len(uncurated_members)}/{len(members)} ({member_share:.1%})"
    )
    for path in uncurated_types:
        print(f"  type not under a topic: {'/'.join(path)}")
    if show:
        for path in uncurated_members:
            print(f"  member not under a topic: {'/'.join(path)}")
    thin_pages = []
    for page in sorted((catalog / "Extensions").glob("*.md")):
        entries = [line for line in page.read_text().splitlines() if line.startswith("- ``")]
        if len(entries) < MIN_PAGE_ENTRIES:
            thin_pages.append(page.name)
            print(f"  extension page listing fewer than {MIN_PAGE_ENTRIES} members: {page.name}")
    if uncurated_types or thin_pages:
        print("error: every public type must be under a topic, and every extension page must "
              f"list at least {MIN_PAGE_ENTRIES} members", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
