"""Shared cryptography: AEAD, Argon2id key slots, OpenSSH keys and SSHSIG signatures."""
