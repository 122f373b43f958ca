# Sphinx configuration of shmring's manual. The pages are Markdown (MyST), one topic a
# file; docs/CMakeLists.txt builds them with warnings as errors (ctest docs_html) and
# passes the version CMake's project() declares, so that there is one version.
project = "shmring"
author = "the shmring authors"
copyright = "the shmring authors, MIT license"

extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
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
