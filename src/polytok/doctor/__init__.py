"""``polytok doctor``: what is wrong with a model folder's tokenizer files.

Each check is one module and gives `Finding` objects with a stable ``code``:

- ``files-disagree`` (`disagree`): two tokenizer files of the folder encode the edge texts differently;
- ``double-bos`` (`double_bos`): the chat template writes the BOS the tokenizer adds too;
- ``forgeable-markers`` (`forgeable`): user text can forge control tokens under the default mode;
- ``template-not-prefix-preserving`` / ``template-failed`` (`prefix`): a rendering of a
  conversation is not the start of the rendering with one message more, or the template fails;
- ``redefined-tokens`` (`redefined`): the config gives an existing id a new text;
- ``past-embedding-size`` (`embedding`): added-token ids at or past ``config.json``'s ``vocab_size``;
- ``unreadable-file`` (`diagnose`): a tokenizer file polytok cannot read;
- ``check-failed`` (`diagnose`): a check raised (a vocabulary that cannot encode its text).

`diagnose` runs them all; docs/doctor.md describes each with an example.
"""

from .diagnose import diagnose as diagnose
from .finding import Finding as Finding

__all__ = ["diagnose", "Finding"]
