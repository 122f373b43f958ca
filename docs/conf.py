# Sphinx configuration of shmring's manual. The pages are Markdown (MyST), one topic a
# file; docs/CMakeLists.txt builds them with warnings as errors (ctest docs_html) and
# passes the version CMake's project() declares, so that there is one version.
project = "shmring"
author = "the shmring authors"
copyright = "the shmring authors, MIT license"

import os
import sys

# c_header: the C API reference, generated from include/*.h (docs/_ext/c_header.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ext"))
extensions = ["myst_parser", "c_header"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build"]

# Headings become link targets (#security-model), as on GitHub, so that a page can
# point at a section of another.
myst_heading_anchors = 3
# Tables and definition lists as the README writes them.
myst_enable_extensions = ["deflist"]

html_theme = "alabaster"
html_title = "shmring manual"
html_show_sourcelink = False
