// Command acp-normalize is a stdio proxy between an Agent Client Protocol
// (ACP) client and a coding agent that repairs vendor protocol deviations.
//
//	acp-normalize [flags] -- AGENT [ARGS...]
//
// This package is wiring only: flags, the logger, the module list and exit
// codes. The work is done by packages pipe, proxy and rewrite.
package main
