// Visibility macros for cachet's shared library and its plugins.
//
// cachet builds with hidden visibility: only what carries CACHET_EXPORT is part of
// libcachet's ABI. Plugins mark their single entry point with CACHET_PLUGIN_EXPORT
// (see plugin.h), never anything else.
#pragma once

#if defined(_WIN32)
#define CACHET_EXPORT __declspec(dllexport)
#define CACHET_PLUGIN_EXPORT __declspec(dllexport)
#else
#define CACHET_EXPORT [[gnu::visibility("default")]]
#define CACHET_PLUGIN_EXPORT [[gnu::visibility("default")]]
#endif
