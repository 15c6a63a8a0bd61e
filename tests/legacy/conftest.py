from tests.comfin.conftest import pkcs12  # noqa: F401
