"""Fetches the official source distribution (its tests/python is the suite).

`pip download --no-binary :all:` would build the sdist's metadata, which
builds cmake from source (10+ minutes); the archive itself is all we need, so
it is fetched from the package index by name and checked against a pinned
SHA-256.

usage: fetch_sdist.py DEST_DIR   (prints the extracted directory)
"""

import hashlib
import html.parser
import os
import sys
import tarfile
import urllib.request

NAME = "apache_tvm_ffi-0.1.15.post2"
SHA256 = "909be9ef5af07726aa9afd38a3111abc4d86cfd5927ebedfa9166232ce7d287b"
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
    out = os.path.join(dest, NAME)
    if os.path.isdir(os.path.join(out, "tests", "python")):
        print(out)
        return
    os.makedirs(dest, exist_ok=True)
    page = urllib.request.urlopen(f"{INDEX}/apache-tvm-ffi/", timeout=120).read().decode()
    parser = Links()
    parser.feed(page)
    url = next(h for h in parser.hrefs if h.split("#")[0].endswith(f"{NAME}.tar.gz"))
    url = urllib.parse.urljoin(f"{INDEX}/apache-tvm-ffi/", url)
    data = urllib.request.urlopen(url, timeout=300).read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        sys.exit(f"sdist checksum mismatch: {digest}")
    archive = os.path.join(dest, f"{NAME}.tar.gz")
    with open(archive, "wb") as f:
        f.write(data)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    print(out)


if __name__ == "__main__":
    main()
