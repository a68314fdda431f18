package kiln

// Version is kiln's release version.
const Version = "0.1.0-dev"
