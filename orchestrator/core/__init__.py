"""The runtime core: requests in, workflows run, model calls made and recorded."""
