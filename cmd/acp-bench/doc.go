// Command acp-bench measures acp-normalize as a process against the floor
// of the same pipe hops through cat, and prints a table (see
// internal/benchharness and docs/performance.md). `make bench` runs it;
// `make bench-short` runs reduced workloads in under a minute.
package main
