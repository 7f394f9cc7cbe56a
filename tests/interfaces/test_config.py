"""Server configuration: the TOML file, command-line overrides, tokens and binding."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from trove.interfaces.cli import cli
from trove.interfaces.config import ConfigError, ServerConfig, bearer_token

TOKEN = "a-long-enough-token-123"
AGENTS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "agents.md"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "trove.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _indented(text: str) -> str:
    """The indented block at the start of ``text`` (a reST literal block), dedented."""
    lines = []
    for line in text.splitlines():
        if line and not line.startswith(" "):
            break
        lines.append(line)
    return textwrap.dedent("\n".join(lines))


def test_the_documented_example_loads_and_the_readme_shows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trove.interfaces import config as module

    assert module.__doc__ is not None
    example = _indented(module.__doc__.split("::\n", 1)[1])
    readme = AGENTS_PAGE.read_text(encoding="utf-8").split("## Configuration file", 1)[1]
    assert readme.split("```toml\n", 1)[1].split("```", 1)[0].strip() == example.strip()
    monkeypatch.setenv("TROVE_TOKEN_ANA", TOKEN)
    config = ServerConfig.load(write(tmp_path, example))
    assert (config.rights.namespace, config.rights.session) == ("default", "planning")
    assert (config.host, config.port, config.max_body_bytes) == ("127.0.0.1", 8765, 1048576)
    [token] = config.tokens
    assert token.name == "ana-laptop" and token.secret == TOKEN
    assert token.rights.namespace == "ana" and not token.rights.allow_delete
    assert token.rights.allow_write and token.rights.author_tier == "explicit"
    assert TOKEN not in repr(config)


def test_tokens_inherit_the_top_level_rights(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        f'namespace = "team"\nallow_delete = false\n[[tokens]]\ntoken = "{TOKEN}"\n',
    )
    rights = ServerConfig.load(path).tokens[0].rights
    assert (rights.namespace, rights.allow_delete, rights.allow_global) == ("team", False, False)


def test_flags_override_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, 'namespace = "team"\nallow_write = false\n[http]\nport = 9000\n')
    config = ServerConfig.load(path).override(namespace="mine", port=None, allow_write=True)
    assert (config.rights.namespace, config.rights.allow_write, config.port) == (
        "mine",
        True,
        9000,
    )
    assert config.override(token=TOKEN).authenticate(TOKEN) == config.rights


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("namspace = 'x'", "unknown key namspace"),
        ("[http]\nprot = 1", "unknown key prot"),
        ("allow_write = 'yes'", "allow_write must be a bool"),
        ("[http]\nport = true", "port must be a int"),
        ("namespace = ''", "namespace must not be empty"),
        ("[[tokens]]\ntoken = 'short'", "at least 16 characters"),
        ("[[tokens]]\nname = 'x'", "exactly one of token or token_env"),
        ("[[tokens]]\ntoken_env = 'TROVE_TEST_UNSET_VARIABLE'", "is not set"),
        (f"[[tokens]]\ntoken = '{TOKEN}'\nauthor_tier = 'god'", "author_tier must be one of"),
        ("this is = not toml", "not valid TOML"),
    ],
)
def test_bad_configuration_is_refused_with_a_reason(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        ServerConfig.load(write(tmp_path, text))


def test_authentication() -> None:
    open_config = ServerConfig()
    assert open_config.authenticate(None) == open_config.rights
    config = ServerConfig().override(token=TOKEN)
    assert config.authenticate(TOKEN) is not None
    assert config.authenticate(None) is None
    assert config.authenticate(TOKEN + "x") is None
    assert bearer_token(f"Bearer {TOKEN}") == TOKEN
    assert bearer_token(f"bearer  {TOKEN} ") == TOKEN
    assert bearer_token(f"Basic {TOKEN}") is None
    assert bearer_token(None) is None


def test_cli_refuses_an_open_server_on_another_address(tmp_path: Path) -> None:
    runner = CliRunner()
    db = str(tmp_path / "kb.db")
    for command in ("serve", "mcp"):
        args = ["--db", db, "--embedder", "none", command, "--create", "--host", "0.0.0.0"]
        if command == "mcp":
            args += ["--transport", "http"]
        result = runner.invoke(cli, args, env={"TROVE_TOKEN": None})
        assert result.exit_code == 1
        assert "refusing to listen on 0.0.0.0 without a token" in result.output


def test_cli_reports_a_bad_config_file(tmp_path: Path) -> None:
    path = write(tmp_path, "allow_everything = true")
    result = CliRunner().invoke(cli, ["--embedder", "none", "serve", "--config", str(path)])
    assert result.exit_code == 1 and "unknown key allow_everything" in result.output
