"""A real evaluator server on 127.0.0.1 (port 0) per test module, with and without a run."""

from __future__ import annotations

from typing import Iterator

import pytest
from serve_helpers import Client, sample_run, serve

from pytest_ocrmetrics.evaluator.serve.server import EvaluatorServer


@pytest.fixture(scope="module")
def server() -> Iterator[EvaluatorServer]:
    yield from serve()


@pytest.fixture(scope="module")
def client(server: EvaluatorServer) -> Client:
    return Client(server)


@pytest.fixture(scope="module")
def run_server() -> Iterator[EvaluatorServer]:
    yield from serve(sample_run())


@pytest.fixture(scope="module")
def run_client(run_server: EvaluatorServer) -> Client:
    return Client(run_server)
