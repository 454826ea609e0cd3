// Package image builds the sidecar's container image without a container
// daemon or a registry: a static binary (BuildBinary), a root filesystem
// of that binary and the CA roots (Build), written as an OCI image layout
// in a tar archive (WriteArchive), the form `skopeo copy oci-archive:`
// and `podman load` read.
//
// The image is reproducible: every timestamp in it (the layer's files,
// the config's created time, the history) is the commit time the Go
// toolchain stamps into the binary, the CA roots come from a pinned module
// version rather than the build machine, and every file's owner and mode
// are fixed. Two builds of one commit with one toolchain give one digest.
//
// Nothing here runs goroutines of its own; every function is called from
// the caller's goroutine.
package image
