__version__ = "0.1.0"
#: The Keyward API version this SDK speaks.
API_VERSION = "v1"
