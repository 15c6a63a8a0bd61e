"""SDICoop, the SOAP channel of the Exchange System: a pure protocol layer (no database, no settings).

| module | job |
|---|---|
| `client.py` | varco → SDI calls through zeep: RiceviFile, NotificaEsito, Trasmetti, Esito |
| `transport.py` | mutual TLS that ignores the environment, MTOM answers, NotReceived vs MaybeReceived |
| `errors.py` | the failures of a call, and whether the SDI may have the file |
| `server.py` | inbound SOAP for varco's services and a simulated SDI's: parse, answer, faults, ?wsdl |
| `outbound.py` | request messages built without zeep (a simulated SDI calling an intermediary; tests) |
| `payloads.py` | the operations' messages as dataclasses, and their XML |
| `envelope.py` | SOAP 1.1 envelopes and Faults |
| `mtom.py` | MTOM/XOP to and from inline base64, byte-exact |
| `contracts.py` | services, operations and soapActions read from the official WSDLs; ?wsdl rewriting |
| `schemas.py` | package data, offline XSD compilation, the hardened parser |
| `pki.py` | a throw-away CA and certificates for tests and demos |
"""
