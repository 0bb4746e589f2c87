// Package scenario holds the capture rig's model scripts: for each agent
// (one file per vendor) and scenario, the fakemodel.Script that makes the
// main agent delegate reading notes.txt to a subagent, and the prompt the
// driver sends. Lookup finds one by "vendor/name".
package scenario
