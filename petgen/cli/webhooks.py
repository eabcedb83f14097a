"""`petgen webhooks …`: the operator's commands for webhook subscriptions (thin: runtime/webhooks/operator.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

STATE_DIR = click.option("--state-dir", type=click.Path(path_type=Path), default=Path(".petgen"), show_default=True,
                         envvar="PETGEN_STATE_DIR", help="The runtime's state directory (its webhook store). "
                         "[env: PETGEN_STATE_DIR]")
REDIS_URL = click.option("--redis-url", envvar="PETGEN_REDIS_URL",
                         help="The shared Redis store, if the runtime uses one. [env: PETGEN_REDIS_URL]")


class StoreContext:
    """The store the commands work on, opened when a command first needs it."""

    def __init__(self, state_dir: Path, redis_url: str | None) -> None:
        self.state_dir, self.redis_url = state_dir, redis_url

    def run(self, action: Callable[..., str], *args: Any, **kwargs: Any) -> None:
        """Call `action(store, …)` and print what it returns; its OperatorError is the command's error."""
        from runtime.webhooks.operator import OperatorError
        from runtime.webhooks.store import StoreUnavailable, open_store

        try:
            store = open_store(self.state_dir, self.redis_url)
        except StoreUnavailable as exc:
            raise click.ClickException(str(exc)) from None
        try:
            click.echo(action(store, *args, **kwargs))
        except (OperatorError, StoreUnavailable) as exc:
            raise click.ClickException(str(exc)) from None
        finally:
            store.close()


def _policy():  # type: ignore[no-untyped-def]
    from runtime.settings import environment_only
    from runtime.webhooks.destinations import Policy

    try:
        return Policy(allow_loopback=bool(environment_only()["webhook_allow_loopback"]))
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@STATE_DIR
@REDIS_URL
@click.pass_context
def webhooks(ctx: click.Context, state_dir: Path, redis_url: str | None) -> None:
    """Manage webhook subscriptions (beta) on the runtime's store."""
    from runtime.settings import parse_redis_url

    try:
        ctx.obj = StoreContext(state_dir, parse_redis_url(redis_url))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--redis-url") from None


@webhooks.command()
@click.option("--contact", required=True, help="Who the token is for (an e-mail address or a name).")
@click.pass_obj
def invite(store: StoreContext, contact: str) -> None:
    """Issue an onboarding token: its holder may subscribe with POST /webhooks."""
    from runtime.webhooks.operator import invite as run

    store.run(run, contact, time.time())


@webhooks.command()
@click.pass_obj
def tokens(store: StoreContext) -> None:
    """List the onboarding tokens (never the tokens themselves): id, contact, issued, subscriptions."""
    from runtime.webhooks.operator import list_tokens

    store.run(list_tokens)


@webhooks.command()
@click.argument("token_id", metavar="TOKEN_ID")
@click.pass_obj
def revoke(store: StoreContext, token_id: str) -> None:
    """Revoke an onboarding token (tok_…); its subscriptions keep their deliveries until removed."""
    from runtime.webhooks.operator import revoke as run

    store.run(run, token_id)


@webhooks.command()
@click.argument("url")
@click.option("--events", multiple=True, metavar="TYPE[,TYPE…]",
              help="Event types to deliver (entry.published, entry.updated, category.updated); default all.")
@click.option("--description", default="", help="A note on the subscription (up to 200 characters).")
@click.pass_obj
def add(store: StoreContext, url: str, events: tuple[str, ...], description: str) -> None:
    """Subscribe URL out of band; prints the signing secret (shown only now)."""
    from runtime.webhooks.operator import OperatorError, parse_events
    from runtime.webhooks.operator import add as run

    try:
        chosen = parse_events(events)
    except OperatorError as exc:
        raise click.BadParameter(str(exc), param_hint="--events") from None
    store.run(run, url, chosen, description, _policy(), time.time())


@webhooks.command("list")
@click.pass_obj
def list_(store: StoreContext) -> None:
    """List every subscription (the operator's and those made with tokens)."""
    from runtime.webhooks.operator import list_subscriptions

    store.run(list_subscriptions)


@webhooks.command()
@click.argument("subscription_id", metavar="ID")
@click.pass_obj
def remove(store: StoreContext, subscription_id: str) -> None:
    """Delete subscription ID and cancel its pending deliveries."""
    from runtime.webhooks.operator import remove as run

    store.run(run, subscription_id)


@webhooks.command()
@click.argument("subscription_id", metavar="ID")
@click.pass_obj
def rotate(store: StoreContext, subscription_id: str) -> None:
    """Issue a new signing secret for ID; the previous one stays valid for 24 hours."""
    from runtime.webhooks.operator import rotate as run

    store.run(run, subscription_id, time.time())


@webhooks.command()
@click.option("--failed", is_flag=True, help="Only deliveries that ran out of attempts (or were refused with 410).")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10_000), help="How many, newest first.")
@click.pass_obj
def deliveries(store: StoreContext, failed: bool, limit: int) -> None:
    """Show recent deliveries: event, subscription, state, attempts, last result."""
    from runtime.webhooks.operator import deliveries as run

    store.run(run, failed_only=failed, limit=limit, now=time.time())


@webhooks.command()
@click.argument("event_id", metavar="EVENT_ID")
@click.option("--subscription", "subscription_id", metavar="ID", help="Only to this subscription.")
@click.pass_obj
def redeliver(store: StoreContext, event_id: str, subscription_id: str | None) -> None:
    """Queue EVENT_ID again (a fresh schedule) for every active subscription it went to."""
    from runtime.webhooks.operator import redeliver as run

    store.run(run, event_id, subscription_id, time.time())


@webhooks.command("send-test")
@click.argument("subscription_id", metavar="ID")
@click.option("--dist", "dist_dir", type=click.Path(path_type=Path), default=Path("dist"), show_default=True,
              envvar="PETGEN_DIST", help="The built dist/ to take a sample entry from. [env: PETGEN_DIST]")
@click.pass_obj
def send_test(store: StoreContext, subscription_id: str, dist_dir: Path) -> None:
    """Send a signed test event (entry.updated with no changes) to ID now and print the answer."""
    from runtime.webhooks.operator import send_test as run

    store.run(run, subscription_id, dist_dir, _policy(), time.time())
