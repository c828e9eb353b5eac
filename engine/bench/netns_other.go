//go:build !linux

package bench

import "errors"

// netLink is a slave's own network namespace: Linux only.
type netLink struct{}

var errNoNetns = errors.New("bench: network namespaces unavailable: Linux only")

func newNetLink(int) (*netLink, error)        { return nil, errNoNetns }
func (n *netLink) slow(string) error          { return errNoNetns }
func (n *netLink) argv(cmd []string) []string { return cmd }
func (n *netLink) down() error                { return errNoNetns }
func (n *netLink) up() error                  { return errNoNetns }
func (n *netLink) close()                     {}
