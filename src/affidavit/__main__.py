"""``python -m affidavit`` runs the same command as the ``affidavit`` script."""

from affidavit.cli.main import main

if __name__ == "__main__":
    main()
