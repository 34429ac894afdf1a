"""The local web page and JSON API (`hybridplan serve`): the CLI's functions and dicts, shown in a browser."""
