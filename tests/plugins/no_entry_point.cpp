// A broken test plugin: a valid shared library that exports something, but not
// the cachet_plugin_v1 entry point.
extern "C" [[gnu::visibility("default")]] int cachet_plugin_v0() { return 0; }
