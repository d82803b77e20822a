package io.rebalance.cutover;

import software.amazon.awssdk.services.dynamodb.model.DescribeStreamRequest;
import software.amazon.awssdk.services.dynamodb.model.DescribeStreamResponse;
import software.amazon.awssdk.services.dynamodb.model.GetRecordsRequest;
import software.amazon.awssdk.services.dynamodb.model.GetRecordsResponse;
import software.amazon.awssdk.services.dynamodb.model.GetShardIteratorRequest;
import software.amazon.awssdk.services.dynamodb.model.GetShardIteratorResponse;
import software.amazon.awssdk.services.dynamodb.model.ListStreamsRequest;
import software.amazon.awssdk.services.dynamodb.model.ListStreamsResponse;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/** A DynamoDB Streams client that passes every call to a real one: tests override the call they change. */
abstract class ForwardingStreams implements DynamoDbStreamsClient {
    final DynamoDbStreamsClient real;

    ForwardingStreams(DynamoDbStreamsClient real) {
        this.real = real;
    }

    @Override
    public GetRecordsResponse getRecords(GetRecordsRequest request) {
        return real.getRecords(request);
    }

    @Override
    public GetShardIteratorResponse getShardIterator(GetShardIteratorRequest request) {
        return real.getShardIterator(request);
    }

    @Override
    public DescribeStreamResponse describeStream(DescribeStreamRequest request) {
        return real.describeStream(request);
    }

    @Override
    public ListStreamsResponse listStreams(ListStreamsRequest request) {
        return real.listStreams(request);
    }

    @Override
    public String serviceName() {
        return real.serviceName();
    }

    @Override
    public void close() {
        real.close();
    }
}
