"""Code that runs ON a device: the Python LiteRT-LM runner (boards, this host), the POSIX-sh
driver for Android phones, and the job/result contract both share with the host.

Stdlib only (plus `litert_lm` in the runner): a board needs nothing else to run it.
"""
