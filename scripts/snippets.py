#!/usr/bin/env python3
"""Writes every Swift block of the README and the DocC articles into a throwaway package.

Used by `bash scripts/snippets` (read that file for the whole story). Standard library only.

    python3 scripts/snippets.py <repository> <package folder>

One test target for the README and one for the DocC articles (each defines the types its
blocks use once: the README in its Quick start, the articles in Getting Started); one
Swift file per block; every target may use Depot, DepotInMemory and DepotOffline. Before a block, an HTML comment
says how to compile it:

    (no marker)                                   declarations at file scope, as written
    <!-- snippet: fragment -->                    statements: wrapped in an async throwing function
    <!-- snippet: fragment(posts: PostRepository) -->
                                                  the same, with the values it uses from its
                                                  surroundings as the function's parameters
    <!-- snippet: manifest -->                    lines of a Package.swift: wrapped in
                                                  `Package(name:…)` and loaded by SwiftPM

A block's `import SwiftUI` is compiled as `#if canImport(SwiftUI) import SwiftUI #endif`: on
Linux, where SwiftUI does not exist, scripts/SwiftUIStandIns.swift declares the few SwiftUI
names the blocks use, so that their use of Depot is still checked.

Every file imports Foundation and Depot (DepotOffline too in DepotOffline's articles,
DepotInMemory where the block uses InMemoryBackend or RouteContext;
Testing when the block uses `@Test` or `#expect`); a fragment's own `import` lines move to the top of its file. `#sourceLocation`
points diagnostics at the Markdown file and line.
"""

import json
import re
import shutil
import sys
from pathlib import Path

def documents(repository):
    """(document, target) for each document whose blocks must compile.

    The README is a target of its own; the articles of the DocC catalogs share one, in
    which the Getting Started article defines the types the others use."""
    found = [("README.md", "SnippetsREADME")]
    for catalog in ["Depot", "DepotInMemory", "DepotOffline"]:
        for path in sorted((repository / "Sources" / catalog / f"{catalog}.docc").glob("*.md")):
            found.append((str(path.relative_to(repository)), "SnippetsArticles"))
    return found


FENCE = re.compile(r"^(\s*)```\s*swift\s*$")
MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(fragment|manifest)\s*(?:\((.*)\))?\s*-->\s*$")
ANY_MARKER = re.compile(r"<!--\s*snippet:")


class SnippetError(Exception):
    pass


def blocks(path):
    """(line of the first code line, kind, parameters, code lines) for each Swift block."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    found = []
    index = 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if not fence:
            if ANY_MARKER.search(lines[index]) and not MARKER.match(lines[index]):
                raise SnippetError(f"{path}:{index + 1}: unknown snippet marker: {lines[index].strip()}")
            index += 1
            continue
        indent = len(fence.group(1))
        kind, parameters = "declarations", ""
        previous = index - 1
        while previous >= 0 and not lines[previous].strip():
            previous -= 1
        marker = MARKER.match(lines[previous]) if previous >= 0 else None
        if marker:
            kind, parameters = marker.group(1), marker.group(2) or ""
        start = index + 1
        end = start
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if end == len(lines):
            raise SnippetError(f"{path}:{index + 1}: a Swift block that never closes")
        code = [line[indent:] if line[:indent].strip() == "" else line for line in lines[start:end]]
        found.append((start + 1, kind, parameters, code))
        index = end + 1
    return found


def swift_file(document, line, kind, parameters, code, number):
    imports = {"import Foundation", "import Depot"}
    if document.startswith("Sources/DepotOffline/"):
        imports.add("import DepotOffline")
    text = "\n".join(code)
    # A block (or the parameters it is given) that uses the in-memory backend needs its product.
    if re.search(r"\b(InMemoryBackend|RouteContext|JSONPlaceholderData)\b", text + (parameters or "")):
        imports.add("import DepotInMemory")
    if "@Test" in text or "#expect" in text or "#require" in text:
        imports.add("import Testing")
    body = list(code)
    # SwiftUI is imported where it exists; elsewhere the target's stand-ins stand for it.
    swiftui = False
    for position, source in enumerate(body):
        if re.match(r"^\s*import\s+SwiftUI\s*$", source):
            swiftui = True
            body[position] = ""
    if kind == "fragment":
        for position, source in enumerate(body):
            if re.match(r"^\s*import\s+\w+\s*$", source):
                imports.add(source.strip())
                body[position] = ""
    out = sorted(imports)
    if swiftui:
        out.extend(["#if canImport(SwiftUI)", "import SwiftUI", "#endif"])
    if kind == "fragment":
        out.append(f"func snippet{number}({parameters}) async throws {{")
    out.append(f'#sourceLocation(file: "{document}", line: {line})')
    out.extend(body)
    out.append("#sourceLocation()")
    if kind == "fragment":
        out.append("}")
    return "\n".join(out) + "\n"


def manifest(document, line, code):
    return "\n".join(
        [
            "// swift-tools-version: 6.0",
            "import PackageDescription",
            "",
            f"// {document}:{line}",
            'let package = Package(name: "App",',
            *code,
            ")",
        ]
    ) + "\n"


def main():
    repository = Path(sys.argv[1]).resolve()
    package = Path(sys.argv[2]).resolve()
    identity = repository.name.lower()
    targets, counts, manifests, versions = {}, {}, [], []
    for document, name in documents(repository):
        found = blocks(repository / document)
        folder = package / "Tests" / name
        folder.mkdir(parents=True, exist_ok=True)
        prefix = re.sub(r"[^A-Za-z0-9]", "", Path(document).stem)
        for number, (line, kind, parameters, code) in enumerate(found, start=1):
            if kind == "manifest":
                place = package / "Manifests" / f"{prefix}-{number}"
                place.mkdir(parents=True, exist_ok=True)
                (place / "Package.swift").write_text(manifest(document, line, code), encoding="utf-8")
                manifests.append(str(place))
                for version in re.findall(r'depot\.git",\s*from:\s*"([^"]+)"', "\n".join(code)):
                    versions.append((f"{document}:{line}", version))
                continue
            source = swift_file(document, line, kind, parameters, code, f"{prefix}{number}")
            if "import SwiftUI" in source:
                shutil.copyfile(repository / "scripts" / "SwiftUIStandIns.swift", folder / "SwiftUIStandIns.swift")
            (folder / f"{prefix}{number:02d}.swift").write_text(source, encoding="utf-8")
            targets[name] = targets.get(name, 0) + 1
        counts[document] = len(found)
    products = ", ".join(
        f'.product(name: "{p}", package: "{identity}")' for p in ["Depot", "DepotInMemory", "DepotOffline"]
    )
    target_lines = [f'        .testTarget(name: "{name}", dependencies: [{products}]),' for name in targets]
    (package / "Package.swift").write_text(
        "\n".join(
            [
                "// swift-tools-version: 6.0",
                "import PackageDescription",
                "",
                "let package = Package(",
                '    name: "DepotSnippets",',
                "    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],",
                f"    dependencies: [.package(path: {json.dumps(str(repository))})],",
                "    targets: [",
                *target_lines,
                "    ],",
                "    swiftLanguageModes: [.v6]",
                ")",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    # Every manifest a reader copies asks for the latest release the CHANGELOG names.
    released = re.search(r"^## \[(\d+\.\d+\.\d+)\]", (repository / "CHANGELOG.md").read_text(encoding="utf-8"), re.M)
    for place, version in versions:
        if released and version != released.group(1):
            sys.exit(f"error: {place} asks for Depot from {version}; the latest release is {released.group(1)}")
    (package / "manifests.txt").write_text("".join(m + "\n" for m in manifests), encoding="utf-8")
    for document, count in counts.items():
        print(f"{count:3d} Swift blocks  {document}")
    print(f"{sum(counts.values()):3d} in all ({len(manifests)} of them Package.swift lines)")


if __name__ == "__main__":
    try:
        main()
    except SnippetError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)
