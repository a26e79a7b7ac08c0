"""What the server adds to its HTTP answers for browsers (``headers``: the security
headers of every page and API answer)."""
