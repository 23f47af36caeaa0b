//go:build !unix

package exec

import osexec "os/exec"

// started is a command that is running.
type started struct{ cmd *osexec.Cmd }

// start starts the command that build returns (trace has no use here).
func start(build func() *osexec.Cmd, trace bool) (*started, error) {
	cmd := build()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &started{cmd: cmd}, nil
}

// wait waits for the command to exit. No peak RSS is measured here (0).
func (s *started) wait() (peak float64, err error) { return 0, s.cmd.Wait() }
