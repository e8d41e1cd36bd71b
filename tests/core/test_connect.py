"""`connect_client` resolves Temporal the standard way and fails with one clear line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from temporalio.client import Client

from core.connect import ConnectError, connect_client, connect_config
from core.payloads import SynapsePayloadConverter
from core.settings import Settings, TemporalSettings
from tests.support import free_ports


def test_default_is_the_embedded_server() -> None:
    config = connect_config(
        Settings(temporal=TemporalSettings(port=7999)), env={"TEMPORAL_CONFIG_FILE": os.devnull}
    )

    assert config["target_host"] == "127.0.0.1:7999"
    assert config["namespace"] == "default"


def test_environment_wins_over_the_default() -> None:
    env = {
        "TEMPORAL_CONFIG_FILE": os.devnull,
        "TEMPORAL_ADDRESS": "temporal.internal:7233",
        "TEMPORAL_NAMESPACE": "prod",
        "TEMPORAL_TLS": "true",
    }

    config = connect_config(Settings(), env=env)

    assert config["target_host"] == "temporal.internal:7233"
    assert config["namespace"] == "prod"
    assert config["tls"]


def test_profile_from_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "temporal.toml"
    path.write_text('[profile.staging]\naddress = "staging:7233"\nnamespace = "stage"\n')

    config = connect_config(
        Settings(), env={"TEMPORAL_CONFIG_FILE": str(path), "TEMPORAL_PROFILE": "staging"}
    )

    assert (config["target_host"], config["namespace"]) == ("staging:7233", "stage")


def test_unknown_profile_is_a_clear_error() -> None:
    with pytest.raises(ConnectError, match=r"^error: invalid Temporal client configuration: .*nope"):
        connect_config(Settings(), env={"TEMPORAL_CONFIG_FILE": os.devnull, "TEMPORAL_PROFILE": "nope"})


async def test_unreachable_server_names_address_and_remedy() -> None:
    (port,) = free_ports(1)
    env = {"TEMPORAL_ADDRESS": f"127.0.0.1:{port}", "TEMPORAL_CONFIG_FILE": os.devnull}

    with pytest.raises(ConnectError) as raised:
        await connect_client(Settings(), env=env)

    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"error: cannot reach Temporal at 127.0.0.1:{port} (namespace 'default');")
    assert "TEMPORAL_ADDRESS" in message and "synapse up" in message


async def test_connects_with_the_pydantic_converter_and_the_claim_check(
    client: Client, tmp_path: Path
) -> None:
    env = {"TEMPORAL_ADDRESS": client.service_client.config.target_host, "TEMPORAL_CONFIG_FILE": os.devnull}

    connected = await connect_client(Settings(data_dir=tmp_path), env=env)

    converter = connected.data_converter
    assert converter.payload_converter_class is SynapsePayloadConverter, "pydantic, with shared adapters"
    assert converter.external_storage is not None
    assert converter.external_storage.payload_size_threshold == 256 * 1024
    big = await converter.encode(["x" * 300_000])
    assert big[0].ByteSize() < 1024, "a large payload is only referenced"
    assert (tmp_path / "artifacts.db").exists(), "and kept in the data dir's artifact store"
    assert connected.namespace == "default"
