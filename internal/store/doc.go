// Package store keeps a memory on disk: where its files live, the writers'
// lock, atomic and appending writes, the state and removal log, imports and
// moves between the memory and its archive. The format of the files is
// package memfile's.
package store
