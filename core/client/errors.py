"""`SynapseError`: an answer of the API that is not a success, with its status and `detail`."""

from __future__ import annotations

import httpx


class SynapseError(Exception):
    """The API answered with an error status; `detail` is its explanation."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"{status}: {detail}")
        self.status = status
        self.detail = detail

    @classmethod
    def of(cls, response: httpx.Response) -> SynapseError:
        """The error of an error answer: its status and the API's `detail` (its text when it is not
        the JSON error body)."""
        try:
            detail = str(response.json().get("detail", response.text))
        except ValueError:
            detail = response.text
        return cls(response.status_code, detail)
