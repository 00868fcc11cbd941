"""Fetches an official source distribution (its tests/python is the suite).

`pip download --no-binary :all:` would build the sdist's metadata, which
builds cmake from source (10+ minutes); the archive itself is all we need, so
it is fetched from the package index by name and checked: the pinned
release against a pinned SHA-256, any other against the digest the index
gives with its link.

usage: fetch_sdist.py DEST_DIR [VERSION]   (prints the extracted directory)
"""

import hashlib
import html.parser
import os
import sys
import tarfile
import urllib.request

PINNED = "0.1.15.post2"
PINNED_SHA256 = "909be9ef5af07726aa9afd38a3111abc4d86cfd5927ebedfa9166232ce7d287b"
INDEX = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.hrefs += [v for k, v in attrs if k == "href"]


def main() -> None:
    dest = sys.argv[1]
    version = sys.argv[2] if len(sys.argv) > 2 else PINNED
    name = f"apache_tvm_ffi-{version}"
    out = os.path.join(dest, name)
    if os.path.isdir(os.path.join(out, "tests", "python")):
        print(out)
        return
    os.makedirs(dest, exist_ok=True)
    page = urllib.request.urlopen(f"{INDEX}/apache-tvm-ffi/", timeout=120).read().decode()
    parser = Links()
    parser.feed(page)
    href = next(h for h in parser.hrefs if h.split("#")[0].endswith(f"{name}.tar.gz"))
    url = urllib.parse.urljoin(f"{INDEX}/apache-tvm-ffi/", href.split("#")[0])
    fragment = href.partition("#")[2]
    expected = PINNED_SHA256 if version == PINNED else fragment.partition("sha256=")[2]
    if not expected:
        sys.exit(f"the index gives no sha256 for {name}.tar.gz")
    data = urllib.request.urlopen(url, timeout=300).read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected:
        sys.exit(f"{name}.tar.gz checksum mismatch: {digest}, expected {expected}")
    archive = os.path.join(dest, f"{name}.tar.gz")
    with open(archive, "wb") as f:
        f.write(data)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    print(out)


if __name__ == "__main__":
    main()
