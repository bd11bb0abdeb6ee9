// Package apicheck has no code: its tests check rules over the module's
// source that the compiler does not, such as "no mutable exported
// package-level variables" (a library caller must not be able to change
// memsync's defaults for every other caller in the process).
package apicheck
