// Typed failures of the protobuf codec (spec 000 §2.7): the handlers turn
// them into 400 Bad Request (415 for `Unsupported`) with the message as is.

export type ProtobufErrorReason =
  /** the body does not start with the 4-byte envelope prefix */
  | 'BadPrefix'
  /** a length or varint runs past the end of the data */
  | 'Truncated'
  /** a field arrived with a wire type its schema cannot hold */
  | 'WireType'
  /** the envelope names another kind than the endpoint's */
  | 'KindMismatch'
  /** the kind has no protobuf field numbers, or a content encoding we do not speak */
  | 'Unsupported'
  /** a value cannot be represented (bad timestamp, bad base64, a JSON value of the wrong type) */
  | 'Invalid';

export class ProtobufError extends Error {
  constructor(
    readonly reason: ProtobufErrorReason,
    message: string,
  ) {
    super(message);
    this.name = 'ProtobufError';
  }
}
