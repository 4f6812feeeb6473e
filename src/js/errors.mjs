// The one error type of the library: every failure, from an argument check or from the engine,
// is a SaccadeError whose `code` is the C status name.

/** An error reported by the engine or by argument checks; `code` is the C status name. */
export class SaccadeError extends Error {
  constructor(message, code = 'SAC_ERR_ARG') {
    super(message);
    this.name = 'SaccadeError';
    this.code = code;
  }
}

export const fail = (message, code) => {
  throw new SaccadeError(message, code);
};

/** What every call on a disposed model throws, and a generation the disposal ended rejects with. */
export const disposedError = () => new SaccadeError('the model was disposed', 'SAC_ERR_STATE');
