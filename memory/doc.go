// Package memory is memsync's public Go API for programs that embed it (the
// orch loop engine, a test, another agent framework).
//
// A Recorder turns items of
// {Input, Output, Source} into memories, a Retriever returns memories for a
// {Search, Limit} query, and an Agent orchestrates the two, optionally
// recording every operation it runs (AutoUpdate) and everything published on
// the topics it subscribes to. FileStore, over a memsync.Memory (a
// repository's .agent/memories.md, or the global layer), is the default
// implementation of both interfaces; other backends (a database, a vector
// store) plug in by implementing them.
package memory
