package benchharness

// DefaultSession is the capture of the session workload: the largest of
// the recorded sessions (Qwen Code with subagents), relative to the
// repository's root, where make bench runs.
const DefaultSession = "testdata/captures/qwen/subagents.jsonl"
