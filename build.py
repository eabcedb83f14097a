"""The CDN's build command: `python build.py` = `petgen build` with deploy defaults.

Netlify sets URL to the site's primary address; elsewhere site.yml's base_url is used.
"""

import os
import sys

from petgen.cli import cli

if __name__ == "__main__":
    args = ["build", "--content", "content", "--out", "dist", "--strict"]
    if os.environ.get("URL"):
        args += ["--base-url", os.environ["URL"]]
    sys.exit(cli.main(args=args + sys.argv[1:], prog_name="build.py", standalone_mode=True))
