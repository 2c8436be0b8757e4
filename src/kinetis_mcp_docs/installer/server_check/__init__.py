"""The server check: talk to a server as a client would (`exchange`), and accept it only
when it behaves exactly so (`verification`): setup's four messages through the command it
registers, and the offline check of a new environment before it is switched to.
"""
