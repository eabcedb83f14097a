"""The CDN's build command: `python build.py` = `petgen build` with deploy defaults.

Netlify sets URL to the site's primary address; elsewhere site.yml's base_url is used.
PETGEN_RUNTIME_ORIGIN names the runtime the CDN proxies to (docs/deploy.md); a Netlify build
(NETLIFY=true) without it fails, as its dynamic routes would answer 404.
"""

import os
import sys

from petgen.cli.main import cli

if __name__ == "__main__":
    if os.environ.get("NETLIFY") == "true" and not os.environ.get("PETGEN_RUNTIME_ORIGIN", "").strip():
        sys.exit("Error: PETGEN_RUNTIME_ORIGIN is not set. Set it in the site's environment variables to the "
                 "runtime's origin (e.g. https://api.example.org); see docs/deploy.md.")
    args = ["build", "--content", "content", "--out", "dist", "--strict"]
    if os.environ.get("URL"):
        args += ["--base-url", os.environ["URL"]]
    sys.exit(cli.main(args=args + sys.argv[1:], prog_name="build.py", standalone_mode=True))
