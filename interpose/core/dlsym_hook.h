// dlsym interposition, the one place that decides what a program gets when it
// looks up a runtime's function through a handle of that runtime's library.
// The exported dlsym is an assembly trampoline: it asks gtap_dlsym_substitute
// and, when gtap has nothing to substitute, tail-jumps to the real dlsym so the
// caller's return address (which RTLD_NEXT depends on) is untouched.
#pragma once

namespace gtap::core {

using SymbolLookup = void* (*)(const char* name);

// When a program calls dlsym(handle, name) with `name` starting with
// `symbolPrefix` and `handle` naming a library whose file name starts with
// `libraryPrefix`, the lookup's non-null answer is returned instead, unless the
// caller is itself such a library (a runtime looking itself up).
void registerLibrarySymbols(const char* libraryPrefix, const char* symbolPrefix, SymbolLookup lookup);

// Called at every dlsym the program makes, before the lookup: a front end that
// finds its hooks in loaded images rescans when libraries were loaded since
// (a program looks up what it just loaded with dlopen before using it).
void registerLoadWatcher(void (*watcher)());

// The real dlsym, for gtap's own lookups.
void* realDlsym(void* handle, const char* name);

}  // namespace gtap::core
