# The addon, built by node-gyp against an installed libshmring that `pkg-config
# shmring` finds (set PKG_CONFIG_PATH for one under another prefix). The library's
# directory is recorded as the addon's run path, so that the installed addon finds the
# library it was built against wherever that is.
{
  "targets": [
    {
      "target_name": "shmring",
      "sources": ["src/shmring.c"],
      "cflags": ["<!@(pkg-config --cflags shmring)", "-std=gnu11", "-Wall", "-Wextra"],
      "libraries": [
        "<!@(pkg-config --libs shmring)",
        "-Wl,-rpath,<!(pkg-config --variable=libdir shmring)"
      ]
    }
  ]
}
