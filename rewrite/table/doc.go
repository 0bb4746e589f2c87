// Package table is the capped, insertion-ordered state of a vendor module
// for one connection (rule P6).
//
// A Table holds at most Config.Entries entries (DefaultEntries), and all
// tables of a connection share one Budget of held bytes (DefaultBytes,
// 64 MiB): an entry's size is what Config.Size says it holds (a held
// cursor/task with a 1 MiB prompt counts 1 MiB). When either cap is
// exceeded the oldest entry is dropped first (across the tables of the
// budget for bytes) and logged at debug. DropSession forgets a session's
// entries when it is closed.
package table
