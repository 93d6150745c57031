#!/bin/sh
# Container entrypoint: private files by default, the passphrase from a secret file, then
# affidavit (or, when the first argument is a program path or a shell, that program).
set -eu
umask 077

if [ -n "${AFFIDAVIT_PASSPHRASE_FILE:-}" ]; then
    if [ ! -r "$AFFIDAVIT_PASSPHRASE_FILE" ]; then
        echo "affidavit-entrypoint: AFFIDAVIT_PASSPHRASE_FILE names a file that cannot be read; mount the secret there" >&2
        exit 2
    fi
    AFFIDAVIT_PASSPHRASE=$(cat "$AFFIDAVIT_PASSPHRASE_FILE")
    export AFFIDAVIT_PASSPHRASE
    unset AFFIDAVIT_PASSPHRASE_FILE
fi

case "${1:-}" in
    /* | sh | bash | python | python3 | affidavit) exec "$@" ;;
    *) exec affidavit "$@" ;;
esac
